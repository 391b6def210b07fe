import TestSupport
import Testing

@testable import HTTPServiceSupport

/// A value a service learns once: every waiter, early or late, gets it or the error that came first,
/// and a waiter that is cancelled stops waiting.
@Suite struct ReadinessTests {
    struct Clash: Error, Equatable {}

    /// Returns once `count` callers wait on `readiness`.
    func waiting<Value>(_ count: Int, on readiness: Readiness<Value>) async throws {
        try await withDeadline(.seconds(60), "\(count) waiters") {
            while readiness.waiterCount < count { await Task.yield() }
        }
    }

    @Test func waitersBeforeAndAfterTheValueGetIt() async throws {
        let port = Readiness<Int>()
        #expect(port.value == nil)
        let early = Task { try await port.wait() }
        try await waiting(1, on: port)
        port.succeed(8080)
        port.succeed(9090)
        port.fail(Clash())
        let late = try await port.wait()
        let first = try await withDeadline(.seconds(60), "the early waiter") { try await early.value }
        #expect(first == 8080 && late == 8080 && port.value == 8080)
    }

    @Test func anErrorBeforeTheValueReachesEveryWaiter() async throws {
        let port = Readiness<Int>()
        let early = Task { try await port.wait() }
        try await waiting(1, on: port)
        port.fail(Clash())
        port.succeed(8080)
        await #expect(throws: Clash.self) { try await early.value }
        await #expect(throws: Clash.self) { try await port.wait() }
        #expect(port.value == nil)
    }

    @Test func aCancelledWaiterStopsWaitingAndOthersStillGetTheValue() async throws {
        let port = Readiness<Int>()
        let cancelled = Task { try await port.wait() }
        let other = Task { try await port.wait() }
        try await waiting(2, on: port)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) {
            try await withDeadline(.seconds(60), "the cancelled waiter") { try await cancelled.value }
        }
        #expect(port.waiterCount == 1)
        port.succeed(8080)
        let value = try await withDeadline(.seconds(60), "the other waiter") { try await other.value }
        #expect(value == 8080)
    }
}
