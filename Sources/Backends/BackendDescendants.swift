import Foundation
import HarnessTimeline

#if canImport(Glibc)
import Glibc
#endif

/// The processes one backend started, found wherever they went: signalled with the backend, killed when
/// it is stopped or has ended, and reaped when they were left to the harness. A backend's process group
/// holds only the programs that stayed in it; one that called `setsid` (a daemon, a database a wrapper
/// script starts, a worker pool) left it, and would outlive the run.
///
/// The harness makes itself the subreaper of its descendants (``ProcessTable/isSubreaper``), so such a
/// process whose parent ended becomes the harness's child rather than init's; each backend is started
/// with a mark of its own in its environment (``variable``); ``ProcessLineage`` decides from the process
/// table which processes are the backend's. Which backend an adopted orphan came from is known by its
/// mark or an earlier look, never by its being the harness's child: runs side by side in one process
/// (`--parallel`, the tests) each find their own.
final class BackendDescendants: Sendable {
    /// The variable every backend starts with, which every program it starts inherits: its value is the
    /// backend's name and a UUID.
    static let variable = "HARNESS_BACKEND_LINEAGE"
    /// How long processes killed with SIGKILL have to disappear (and, if the harness adopted them, be
    /// reaped) before a stop goes on without them.
    static let killWait = Duration.seconds(2)

    /// This backend's value of ``variable``.
    let value: String
    private let lineage = LockedState<ProcessLineage?>(nil)
    /// The lineages of the backends whose processes are not all known to be gone, by mark: killed at the
    /// harness's exit (a second Ctrl-C, a fatal error) by ``killEveryLineage()``.
    private static let unsettled = LockedState<[String: ProcessLineage]>([:])
    private static let killAtExit: Void = { atexit { BackendDescendants.killEveryLineage() } }()

    init(backend: String) {
        value = "\(backend)-\(UUID().uuidString)"
    }

    /// The variable to start the backend with.
    var environment: [String: String] { [Self.variable: value] }

    /// The mark as an entry of an environment, `NAME=value`.
    var mark: String { "\(Self.variable)=\(value)" }

    /// Follows the descendants of `root`, the backend's process, just started.
    func follow(root: pid_t) {
        _ = Self.killAtExit
        let followed = ProcessLineage(root: root, harness: getpid())
        let mark = self.mark
        lineage.withLock { $0 = followed }
        Self.unsettled.withLock { $0[mark] = followed }
    }

    /// Looks at the process table: the backend's processes now, remembered for later looks (an orphan
    /// that cleared its environment is found again by what an earlier look saw).
    func look() async -> ProcessLineage.Claim {
        guard let current = lineage.withLock({ $0 }) else {
            return ProcessLineage.Claim(running: [], outsideGroup: [], endedOrphans: [])
        }
        let mark = self.mark
        let (updated, claim) = await ProcessTable.offThePool { () -> (ProcessLineage, ProcessLineage.Claim) in
            var looked = current
            let claim = looked.claim(ProcessTable.snapshot()) { ProcessTable.environment(of: $0.pid, carries: mark) }
            return (looked, claim)
        }
        lineage.withLock { $0 = updated }
        Self.unsettled.withLock { unsettled in
            guard unsettled[mark] != nil else { return }
            unsettled[mark] = updated
        }
        return claim
    }

    /// Whether one of the backend's processes still runs (the backend aside); those that ended as the
    /// harness's are reaped on the way.
    func anyRunning() async -> Bool {
        let claim = await look()
        _ = ProcessTable.reap(claim.endedOrphans)
        return !claim.running.isEmpty
    }

    /// SIGKILL to each of the backend's processes, until none is left running or waiting to be reaped by
    /// the harness, for at most ``killWait``. Call it from a task that is not cancelled.
    func killAll() async {
        let deadline = ContinuousClock.now + Self.killWait
        while true {
            let claim = await look()
            ProcessTable.kill(claim.running)
            let reaped = ProcessTable.reap(claim.endedOrphans)
            if claim.running.isEmpty, reaped {
                let mark = self.mark
                Self.unsettled.withLock { $0[mark] = nil }
                return
            }
            guard ContinuousClock.now < deadline else { return }
            // No event says when a process the harness did not start has ended: the table is looked at
            // again 20 ms later (a cancelled sleep only looks again sooner: the deadline still ends it).
            await pause(for: .milliseconds(20))
        }
    }

    /// SIGKILL to every process of every backend not yet settled: at the harness's exit, when no stop
    /// will run. Synchronous; nothing is reaped (the harness is on its way out).
    static func killEveryLineage() {
        let lineages = unsettled.withLock { $0 }
        guard !lineages.isEmpty else { return }
        let table = ProcessTable.snapshot()
        for (mark, lineage) in lineages {
            var followed = lineage
            let claim = followed.claim(table) { ProcessTable.environment(of: $0.pid, carries: mark) }
            ProcessTable.kill(claim.running)
        }
    }
}
