import HarnessTimeline

/// A value a running service learns once (the port it bound), or the error that stopped it first.
/// Whoever needs the value waits for it; a waiter that is cancelled stops waiting.
public final class Readiness<Value: Sendable>: Sendable {
    private enum State {
        case waiting([Int: CheckedContinuation<Value, any Error>], next: Int)
        case ready(Value)
        case failed(any Error)
    }

    private let state = LockedState(State.waiting([:], next: 0))

    public init() {}

    /// The value, if it is known.
    public var value: Value? {
        state.withLock { state in
            if case .ready(let value) = state { return value }
            return nil
        }
    }

    /// How many callers are waiting (for tests).
    var waiterCount: Int {
        state.withLock { state in
            if case .waiting(let waiters, _) = state { return waiters.count }
            return 0
        }
    }

    /// Gives every waiter `value`; later calls, and a call after ``fail(_:)``, change nothing.
    public func succeed(_ value: Value) { settle(.ready(value)) }

    /// Gives every waiter `error`, unless the value is already known.
    public func fail(_ error: any Error) { settle(.failed(error)) }

    private func settle(_ settled: State) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard case .waiting(let waiters, _) = state else { return [] }
            state = settled
            return Array(waiters.values)
        }
        for waiter in waiters {
            switch settled {
            case .ready(let value): waiter.resume(returning: value)
            case .failed(let error): waiter.resume(throwing: error)
            case .waiting: break
            }
        }
    }

    /// Waits for the value; throws the service's error, or `CancellationError` when the caller is cancelled.
    public func wait() async throws -> Value {
        let id = state.withLock { state -> Int in
            guard case .waiting(let waiters, let next) = state else { return -1 }
            state = .waiting(waiters, next: next + 1)
            return next
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let settled = state.withLock { state -> Result<Value, any Error>? in
                    switch state {
                    case .ready(let value): return .success(value)
                    case .failed(let error): return .failure(error)
                    case .waiting(var waiters, let next):
                        if Task.isCancelled { return .failure(CancellationError()) }
                        waiters[id] = continuation
                        state = .waiting(waiters, next: next)
                        return nil
                    }
                }
                if let settled { continuation.resume(with: settled) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
                guard case .waiting(var waiters, let next) = state else { return nil }
                let waiter = waiters.removeValue(forKey: id)
                state = .waiting(waiters, next: next)
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}
