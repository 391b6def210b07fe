/// The tasks a component starts for work that outlives the call starting it (a process's exit to
/// record, a launch to make after a call returns), owned by the component: each is forgotten when it
/// ends, and the component's shutdown calls ``cancelAllAndWait()``, which cancels what is left and
/// waits for it. Once that is called, ``start(_:)`` starts nothing.
public final class OwnedTasks: Sendable {
    private struct State {
        var nextID = 0
        var running: [Int: Task<Void, Never>] = [:]
        var closed = false
    }

    private let state = LockedState(State())

    public init() {}

    /// How many are running.
    public var count: Int { state.withLock { $0.running.count } }

    /// Runs `body` on a task of its own, owned by this set; nothing when the set is closed.
    public func start(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard !state.closed else { return }
            let id = state.nextID
            state.nextID += 1
            // Made under the lock, so it is in `running` before its end can take it out (its body
            // runs elsewhere, after this returns). cancelAllAndWait() cancels and awaits it.
            state.running[id] = Task {
                await body()
                self.state.withLock { _ = $0.running.removeValue(forKey: id) }
            }
        }
    }

    /// Cancels every task still running and waits until each has ended; starts no more.
    public func cancelAllAndWait() async {
        let running = state.withLock { state in
            state.closed = true
            return Array(state.running.values)
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}

/// `body`'s result, with the caller's cancellation kept from it: for a stop that must finish what it
/// began (processes to end, files to close) even when the run around it is being cancelled. Awaited at
/// once, so the task it runs on is the caller's as much as a child's.
public func uncancelled<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    await Task { await body() }.value
}
