/// Which processes of the machine are one backend's: every process it started, however it left the
/// backend's process group (`setsid`, a double fork, a daemon), decided from one look at the process
/// table. A value: the caller reads `/proc`, then signals and reaps what ``claim(_:isMarked:)`` returns.
///
/// A process is the backend's when it started no earlier than the backend and
/// 1. its parent is the backend or one of the backend's processes (the chain of parents, `setsid` or not);
/// 2. it is in the backend's process group (a double fork that kept the group: its parent is now the
///    harness, as subreaper);
/// 3. its environment carries the backend's mark (``BackendDescendants/variable``, which every program
///    inherits unless it clears its environment): a double fork after `setsid`, whose parent and group
///    both changed;
/// 4. an earlier look found it (the same pid, started at the same tick): an orphan that cleared its
///    environment, seen while its parent still lived;
///
/// or its parent is one of those. Never the backend itself (its own handle signals it, and its waiter
/// reaps it), the harness, or init. None of the rules can take a process the harness spawned itself: its
/// parent is the harness, not one of the backend's; its group is its own or the harness's; its environment
/// is the harness's and the program's, without this backend's mark; and an earlier look could not have
/// taken it. So reaping what a claim returns never takes an exit status that another part of the harness
/// waits for.
struct ProcessLineage: Sendable, Equatable {
    /// One process across pid reuse.
    struct Key: Hashable, Sendable {
        var pid: Int32
        var started: UInt64

        init(_ record: ProcessRecord) {
            pid = record.pid
            started = record.started
        }
    }

    /// What one look found of the backend's processes.
    struct Claim: Sendable, Equatable {
        /// Those still running (zombies aside), lowest pid first: to be signalled.
        var running: [Int32]
        /// Those of `running` outside the backend's process group, which a signal to the group misses.
        var outsideGroup: [Int32]
        /// Those that ended and whose parent is now the harness (orphans it took as subreaper): the harness
        /// reaps them, since nobody else will. One whose parent is another of the backend's is left to it.
        var endedOrphans: [Int32]

        /// Nothing of the backend's runs, and nothing is left for the harness to reap.
        var isSettled: Bool { running.isEmpty && endedOrphans.isEmpty }
    }

    /// The backend's process.
    let root: Int32
    /// This process.
    let harness: Int32
    /// When the backend started (clock ticks after boot), learned from the first table that lists it;
    /// until then no process is too old to be the backend's.
    private(set) var rootStarted: UInt64?
    /// The processes earlier looks found.
    private(set) var known: Set<Key> = []

    init(root: Int32, harness: Int32, rootStarted: UInt64? = nil) {
        self.root = root
        self.harness = harness
        self.rootStarted = rootStarted
    }

    /// The backend's processes in `table`, remembered for the next look. `isMarked` tells whether a
    /// process's environment carries the mark; it is asked only about running processes that no other
    /// rule took (reading an environment is the one costly part of a look).
    mutating func claim(_ table: [ProcessRecord], isMarked: (ProcessRecord) -> Bool) -> Claim {
        let (root, harness) = (self.root, self.harness)
        let rootRecord = table.first { $0.pid == root }
        if rootStarted == nil { rootStarted = rootRecord?.started }
        // The backend's pid taken by another process since the backend ended: its children and group are
        // that process's, not the backend's; only the mark and earlier looks still say what is.
        let rootReused = rootRecord.map { $0.started != rootStarted } ?? false
        let (since, known) = (rootStarted ?? 0, self.known)
        func eligible(_ record: ProcessRecord) -> Bool {
            record.pid > 1 && record.pid != root && record.pid != harness && record.started >= since
        }
        var children: [Int32: [ProcessRecord]] = [:]
        for record in table { children[record.parent, default: []].append(record) }
        var claimed: [Int32: ProcessRecord] = [:]
        func take(_ seeds: [ProcessRecord]) {
            var pending = seeds
            while let record = pending.popLast() {
                guard eligible(record), claimed[record.pid] == nil else { continue }
                claimed[record.pid] = record
                pending += children[record.pid] ?? []
            }
        }
        take(
            rootReused
                ? table.filter { known.contains(Key($0)) }
                : (children[root] ?? []) + table.filter { $0.group == root || known.contains(Key($0)) })
        var marked: [ProcessRecord] = []
        for record in table where claimed[record.pid] == nil && !record.isZombie && eligible(record) {
            if isMarked(record) { marked.append(record) }
        }
        take(marked)
        let present = Set(table.map(Key.init))
        self.known = Set(claimed.values.map(Key.init)).union(known.intersection(present))
        let running = claimed.values.filter { !$0.isZombie }
        return Claim(
            running: running.map(\.pid).sorted(), outsideGroup: running.filter { $0.group != root }.map(\.pid).sorted(),
            endedOrphans: claimed.values.filter { $0.isZombie && $0.parent == harness }.map(\.pid).sorted())
    }
}
