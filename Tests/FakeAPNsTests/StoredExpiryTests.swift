import Foundation
import HarnessTimeline
import TestSupport
import Testing

@testable import FakeAPNs

/// Store-and-forward's expiries on a clock the test moves: a stored notification replaced by a newer
/// one expires at the newer one's time, whether that is later (the gateway's timer loop wakes, finds it
/// not due and sleeps again) or sooner (the loop is woken and sleeps until the sooner one). No wall clock, so no machine is too slow for it.
@Suite struct StoredExpiryTests {
    /// A clock that stands still until the test moves it; says when a timer starts sleeping.
    final class ManualClock: ExpiryClock, @unchecked Sendable {
        private let lock = NSLock()
        private var current: Date
        private var sleepers: [(id: UUID, until: Date, continuation: CheckedContinuation<Void, Never>)] = []
        /// The time each new sleeper waits for, in the order they started.
        let sleeping: AsyncStream<Date>
        private let sleepingContinuation: AsyncStream<Date>.Continuation

        init(_ start: Date) {
            current = start
            (sleeping, sleepingContinuation) = AsyncStream.makeStream(of: Date.self)
        }

        var now: Date { lock.withLock { current } }
        var sleeperCount: Int { lock.withLock { sleepers.count } }

        func sleep(until date: Date) async {
            let id = UUID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let waits = lock.withLock { () -> Bool in
                        guard date > current, !Task.isCancelled else { return false }
                        sleepers.append((id, date, continuation))
                        return true
                    }
                    if waits { sleepingContinuation.yield(date) } else { continuation.resume() }
                }
            } onCancel: {
                let cancelled = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                    guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                    return sleepers.remove(at: index).continuation
                }
                cancelled?.resume()
            }
        }

        func advance(to date: Date) {
            let due = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                current = date
                let due = sleepers.filter { $0.until <= date }
                sleepers.removeAll { $0.until <= date }
                return due.map(\.continuation)
            }
            for continuation in due { continuation.resume() }
        }
    }

    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func notification(_ id: String, to token: String, expiringIn seconds: Int) -> AcceptedNotification {
        AcceptedNotification(
            apnsId: id, deviceToken: token, topic: "com.example.app", pushType: "background", priority: 5,
            expiration: Int(start.timeIntervalSince1970) + seconds, collapseId: nil,
            payload: #"{"aps":{"content-available":1}}"#)
    }

    /// A gateway on a manual clock at `start`, with one device that is offline.
    func offlineDevice() -> (ManualClock, Timeline, DeviceGateway, String) {
        let clock = ManualClock(start)
        let timeline = Timeline()
        let gateway = DeviceGateway(
            timeline: timeline, log: NotificationLog(retention: nil), policy: DeliveryPolicy(), clock: clock)
        let token = gateway.register(topic: "com.example.app") { _ in }
        gateway.setOnline(token, false)
        return (clock, timeline, gateway, token)
    }

    func expiries(_ timeline: Timeline) -> [String] {
        timeline.events.filter { $0.kind == "apns.expired" }.compactMap { $0["apnsId"] }
    }

    /// The gateway's timer loop on `gateway` while `body` runs; cancelled and awaited after it.
    func withTimerLoop(_ gateway: DeviceGateway, _ body: () async throws -> Void) async rethrows {
        let loop = Task { await gateway.run() }
        defer { loop.cancel() }
        try await body()
        loop.cancel()
        await loop.value
    }

    @Test func aLaterReplacementKeepsTheDeadlineAndTheLoopSleepsAgain() async throws {
        let (clock, timeline, gateway, token) = offlineDevice()
        var sleeping = clock.sleeping.makeAsyncIterator()
        try await withTimerLoop(gateway) {
            #expect(gateway.accept(notification("A", to: token, expiringIn: 5)).decision == .stored)
            #expect(await sleeping.next() == start.addingTimeInterval(5), "the loop sleeps until A's expiry")
            #expect(gateway.accept(notification("B", to: token, expiringIn: 10)).decision == .stored)
            #expect(timeline.events.contains { $0.kind == "apns.replaced" && $0["apnsId"] == "A" })
            #expect(clock.sleeperCount == 1, "a later deadline does not wake the loop")

            clock.advance(to: start.addingTimeInterval(5))
            #expect(await sleeping.next() == start.addingTimeInterval(10), "it woke, found B not due, and sleeps again")
            #expect(expiries(timeline).isEmpty)

            clock.advance(to: start.addingTimeInterval(10))
            let expired = try await withDeadline(.seconds(30), "an apns.expired event") {
                await timeline.subscribe().first { $0.kind == "apns.expired" }
            }
            #expect(expired?["apnsId"] == "B")
            #expect(expiries(timeline) == ["B"])
            #expect(clock.sleeperCount == 0, "with nothing stored the loop waits on no clock")
        }
    }

    @Test func aSoonerReplacementWakesTheLoop() async throws {
        let (clock, timeline, gateway, token) = offlineDevice()
        var sleeping = clock.sleeping.makeAsyncIterator()
        try await withTimerLoop(gateway) {
            gateway.accept(notification("A", to: token, expiringIn: 60))
            #expect(await sleeping.next() == start.addingTimeInterval(60))
            gateway.accept(notification("B", to: token, expiringIn: 5))
            #expect(await sleeping.next() == start.addingTimeInterval(5), "woken, it sleeps until the sooner expiry")
            #expect(clock.sleeperCount == 1, "the sleep until A's time was cancelled")

            clock.advance(to: start.addingTimeInterval(5))
            let expired = try await withDeadline(.seconds(30), "an apns.expired event") {
                await timeline.subscribe().first { $0.kind == "apns.expired" }
            }
            #expect(expired?["apnsId"] == "B")
            #expect(clock.sleeperCount == 0)
            #expect(expiries(timeline) == ["B"])
        }
    }

    /// What CI once saw when its wall clock outran the old test: a replacement whose expiry has already
    /// passed is discarded and the stored one is kept, as Apple keeps it.
    @Test func aReplacementAlreadyExpiredIsDiscardedAndTheStoredOneKept() async throws {
        let (clock, timeline, gateway, token) = offlineDevice()
        var sleeping = clock.sleeping.makeAsyncIterator()
        try await withTimerLoop(gateway) {
            gateway.accept(notification("A", to: token, expiringIn: 60))
            #expect(await sleeping.next() == start.addingTimeInterval(60))
            clock.advance(to: start.addingTimeInterval(10))
            #expect(gateway.accept(notification("B", to: token, expiringIn: 5)).decision == .discarded)
            #expect(!timeline.events.contains { $0.kind == "apns.replaced" })
            #expect(clock.sleeperCount == 1)
            // A expires at its own time.
            clock.advance(to: start.addingTimeInterval(60))
            let expired = try await withDeadline(.seconds(30), "an apns.expired event") {
                await timeline.subscribe().first { $0.kind == "apns.expired" }
            }
            #expect(expired?["apnsId"] == "A")
        }
    }
    /// Coalescing on the same loop: priority-5 pushes to an online device are held for the window, a
    /// newer one replaces the held one, and the newest goes out when the window ends; priority 10 does
    /// not wait.
    @Test func theNewestPushOfACoalescingWindowGoesOutWhenItEnds() async {
        let clock = ManualClock(start)
        let timeline = Timeline()
        var policy = DeliveryPolicy()
        policy.coalescingWindow = .seconds(8)
        let gateway = DeviceGateway(
            timeline: timeline, log: NotificationLog(retention: nil), policy: policy, clock: clock)
        let (delivered, deliveredContinuation) = AsyncStream.makeStream(of: String.self)
        let token = gateway.register(topic: "com.example.app") { deliveredContinuation.yield($0.apnsId) }
        var deliveries = delivered.makeAsyncIterator()
        var sleeping = clock.sleeping.makeAsyncIterator()
        await withTimerLoop(gateway) {
            #expect(gateway.accept(notification("A", to: token, expiringIn: 60)).decision == .accepted)
            #expect(await sleeping.next() == start.addingTimeInterval(8), "the loop sleeps until the window ends")
            clock.advance(to: start.addingTimeInterval(3))
            #expect(gateway.accept(notification("B", to: token, expiringIn: 60)).decision == .accepted)
            let coalesced = timeline.events.filter { $0.kind == "apns.coalesced" }
            #expect(coalesced.map { $0["apnsId"] } == ["A"])
            #expect(coalesced.first?["replacedBy"] == "B")
            #expect(clock.sleeperCount == 1, "the window keeps its end: B does not start another")

            var urgent = notification("C", to: token, expiringIn: 60)
            urgent.priority = 10
            #expect(gateway.accept(urgent).decision == .delivered)
            #expect(await deliveries.next() == "C")

            clock.advance(to: start.addingTimeInterval(8))
            #expect(await deliveries.next() == "B", "the newest of the window, once it ended")
            #expect(clock.sleeperCount == 0)
        }
        deliveredContinuation.finish()
        #expect(await deliveries.next() == nil, "A never went out")
    }
}
