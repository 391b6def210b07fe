import TestSupport
import Testing

@testable import DeviceSimulator

/// The device's timers: one per purpose, replaced, cancelled and forgotten in one place, and only the
/// current timer of a purpose counts when it fires.
@Suite struct PolicyTimersTests {
    static let suspension = PolicyTimers.Purpose.suspension(bundleId: "a")
    static let watchdog = PolicyTimers.Purpose.completionWatchdog(bundleId: "a", completionId: 1)
    static let otherApp = PolicyTimers.Purpose.suspension(bundleId: "b")
    /// Long enough never to fire during a test.
    static let never = Duration.seconds(3600)

    /// Records what fired, and lets a test wait for the next firing.
    actor Fired {
        var fired: [(PolicyTimers.Purpose, Int)] = []
        var waiters: [CheckedContinuation<(PolicyTimers.Purpose, Int), Never>] = []

        func record(_ purpose: PolicyTimers.Purpose, _ generation: Int) {
            fired.append((purpose, generation))
            for waiter in waiters { waiter.resume(returning: (purpose, generation)) }
            waiters.removeAll()
        }

        func next() async -> (PolicyTimers.Purpose, Int) {
            if let first = fired.first { return first }
            return await withCheckedContinuation { waiters.append($0) }
        }
    }

    @Test func aTimerFiresWithItsPurposeAndIsTakenOnce() async throws {
        var timers = PolicyTimers()
        let fired = Fired()
        timers.start(Self.suspension, after: .zero, on: PolicyClock()) { await fired.record($0, $1) }
        #expect(timers.isRunning(Self.suspension))
        let (purpose, generation) = try await withDeadline(.seconds(60), "the timer") { await fired.next() }
        #expect(purpose == Self.suspension)
        let taken = timers.take(purpose, generation: generation)
        let again = timers.take(purpose, generation: generation)
        #expect(taken)
        #expect(!timers.isRunning(Self.suspension))
        #expect(!again, "a timer is due once")
    }

    @Test func startingAgainReplacesTheTimerAndTheOldOneNoLongerCounts() async throws {
        var timers = PolicyTimers()
        let fired = Fired()
        timers.start(Self.suspension, after: Self.never, on: PolicyClock()) { await fired.record($0, $1) }
        timers.start(Self.suspension, after: .zero, on: PolicyClock()) { await fired.record($0, $1) }
        let (_, generation) = try await withDeadline(.seconds(60), "the timer") { await fired.next() }
        let replaced = timers.take(Self.suspension, generation: generation - 1)
        let current = timers.take(Self.suspension, generation: generation)
        #expect(!replaced, "the replaced timer's generation")
        #expect(current)
    }

    @Test func aCancelledTimerNoLongerCounts() {
        var timers = PolicyTimers()
        timers.start(Self.suspension, after: Self.never, on: PolicyClock()) { _, _ in }
        let cancelled = timers.cancel(Self.suspension)
        let again = timers.cancel(Self.suspension)
        let taken = timers.take(Self.suspension, generation: 1)
        #expect(cancelled)
        #expect(!again, "nothing left to cancel")
        #expect(!taken)
    }

    @Test func cancellingAnAppsTimersLeavesTheOthers() {
        var timers = PolicyTimers()
        for purpose in [Self.suspension, Self.watchdog, Self.otherApp] {
            timers.start(purpose, after: Self.never, on: PolicyClock()) { _, _ in }
        }
        timers.cancelAll(of: "a") { if case .completionWatchdog = $0 { true } else { false } }
        #expect(Set(timers.purposes(of: "a")) == [Self.suspension])
        timers.cancelAll(of: "a")
        #expect(timers.purposes(of: "a").isEmpty)
        #expect(timers.isRunning(Self.otherApp))
        timers.cancelAll()
        #expect(!timers.isRunning(Self.otherApp))
    }
}
