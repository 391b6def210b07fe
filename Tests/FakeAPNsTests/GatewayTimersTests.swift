import Foundation
import Testing

@testable import FakeAPNs

/// The gateway's deadlines as a value, rule by rule: when the one timer loop must be woken, what it
/// sleeps until, and what is due when it wakes.
struct GatewayTimersTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func key(_ token: String, _ purpose: GatewayTimers.Purpose, topic: String = "com.example.app")
        -> GatewayTimers.Key
    {
        .init(token: token, topic: topic, purpose: purpose)
    }

    @Test func aLoopThatSleepsWithoutADeadlineIsWokenByAnyDeadline() {
        var timers = GatewayTimers()
        let until = timers.sleeping()
        #expect(until == nil)
        let wakes = timers.set(key("a", .expiry), at: start.addingTimeInterval(3600))
        #expect(wakes)
    }

    @Test func onlyASoonerDeadlineWakesASleepingLoop() {
        var timers = GatewayTimers()
        _ = timers.set(key("a", .expiry), at: start.addingTimeInterval(10))
        let until = timers.sleeping()
        #expect(until == start.addingTimeInterval(10))
        let later = timers.set(key("b", .expiry), at: start.addingTimeInterval(20))
        #expect(!later, "later: the loop looks again at 10")
        let same = timers.set(key("c", .expiry), at: start.addingTimeInterval(10))
        #expect(!same, "at the same time: the loop wakes then anyway")
        let sooner = timers.set(key("d", .coalescing), at: start.addingTimeInterval(5))
        #expect(sooner)
    }

    @Test func aDeadlineSetAgainReplacesTheOldOne() {
        var timers = GatewayTimers()
        _ = timers.set(key("a", .expiry), at: start.addingTimeInterval(5))
        _ = timers.set(key("a", .expiry), at: start.addingTimeInterval(10))
        let early = timers.takeDue(at: start.addingTimeInterval(5))
        #expect(early.isEmpty, "the stored one was replaced by a later one")
        #expect(timers.earliest == start.addingTimeInterval(10))
        let due = timers.takeDue(at: start.addingTimeInterval(10))
        #expect(due == [key("a", .expiry)])
        #expect(timers.earliest == nil, "what is taken is gone")
    }

    @Test func whatIsDueComesSoonestFirstThenByTokenTopicAndPurpose() {
        var timers = GatewayTimers()
        _ = timers.set(key("b", .coalescing), at: start.addingTimeInterval(2))
        _ = timers.set(key("b", .expiry), at: start.addingTimeInterval(2))
        _ = timers.set(key("a", .expiry), at: start.addingTimeInterval(2))
        _ = timers.set(key("z", .expiry), at: start.addingTimeInterval(1))
        _ = timers.set(key("later", .expiry), at: start.addingTimeInterval(3))
        let due = timers.takeDue(at: start.addingTimeInterval(2))
        #expect(
            due == [
                key("z", .expiry), key("a", .expiry), key("b", .expiry), key("b", .coalescing),
            ])
        #expect(timers.earliest == start.addingTimeInterval(3))
    }

    @Test func aDeviceBackOnlineLosesItsExpiriesAndKeepsItsCoalescing() {
        var timers = GatewayTimers()
        _ = timers.set(key("a", .expiry), at: start.addingTimeInterval(5))
        _ = timers.set(key("a", .expiry, topic: "other"), at: start.addingTimeInterval(6))
        _ = timers.set(key("a", .coalescing), at: start.addingTimeInterval(7))
        _ = timers.set(key("b", .expiry), at: start.addingTimeInterval(8))
        timers.cancelAll(token: "a", purpose: .expiry)
        let due = timers.takeDue(at: start.addingTimeInterval(60))
        #expect(due == [key("a", .coalescing), key("b", .expiry)])
    }
}
