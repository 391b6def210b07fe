import HTTPServiceSupport
import TestSupport
import Testing

/// A value a service learns once: every waiter, early or late, gets it or the error that came first,
/// and a waiter that is cancelled stops waiting.
@Suite struct ReadinessTests {
    struct Clash: Error, Equatable {}

    @Test func waitersBeforeAndAfterTheValueGetIt() async throws {
        let port = Readiness<Int>()
        #expect(port.value == nil)
        let early = Task { try await port.wait() }
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
        cancelled.cancel()
        await #expect(throws: CancellationError.self) {
            try await withDeadline(.seconds(60), "the cancelled waiter") { try await cancelled.value }
        }
        port.succeed(8080)
        let value = try await withDeadline(.seconds(60), "the other waiter") { try await other.value }
        #expect(value == 8080)
    }
}
