import HarnessTimeline
import Testing

/// ``BoundedHistory``: what is kept within a count and a memory budget, a row at a time.
@Suite struct BoundedHistoryTests {
    @Test func withoutLimitsEverythingIsKept() {
        var kept = BoundedHistory<Int>()
        for value in 0..<1_000 {
            let forgotten = kept.append(value, bytes: 1_000)
            #expect(forgotten == nil)
        }
        #expect(kept.all == Array(0..<1_000))
        #expect(kept.forgotten == 0 && kept.count == 1_000 && kept.bytes == 1_000_000)
    }

    @Test func aRetentionKeepsTheNewestThatMany() {
        var kept = BoundedHistory<Int>(retention: 10)
        var forgotten: [Int] = []
        for value in 0..<95 {
            if let dropped = kept.append(value, bytes: 1) { forgotten.append(dropped) }
            #expect(kept.count == min(value + 1, 10))
        }
        #expect(kept.all == Array(85..<95))
        #expect(forgotten == Array(0..<85), "one at a time, oldest first")
        #expect(kept.forgotten == 85)
    }

    @Test func aBudgetKeepsTheNewestWithinItsBytes() {
        var kept = BoundedHistory<Int>(budget: 1_000)
        for value in 0..<1_000 {
            _ = kept.append(value, bytes: 30)
            #expect(kept.bytes <= 1_000)
        }
        // 33 elements of 30 bytes fit in 1,000.
        #expect(kept.all == Array(967..<1_000))
        #expect(kept.bytes == 990)
    }

    @Test func theCountOrTheBudgetWhicheverComesFirst() {
        var byCount = BoundedHistory<Int>(retention: 5, budget: 1_000_000)
        var byBudget = BoundedHistory<Int>(retention: 1_000, budget: 100)
        for value in 0..<100 {
            _ = byCount.append(value, bytes: 10)
            _ = byBudget.append(value, bytes: 10)
        }
        #expect(byCount.all == Array(95..<100))
        #expect(byBudget.all == Array(90..<100) && byBudget.bytes == 100)
    }

    /// A large element forgets as many of the oldest as it needs; the first is handed back, the others
    /// are freed at once.
    @Test func aLargeElementMakesRoomForItself() {
        var kept = BoundedHistory<String>(budget: 100)
        for value in ["a", "b", "c", "d"] { _ = kept.append(value, bytes: 20) }
        let dropped = kept.append("large", bytes: 70)
        #expect(dropped == "a")
        #expect(kept.all == ["d", "large"] && kept.bytes == 90 && kept.forgotten == 3)
        // One over the whole budget is still kept, alone, as the newest.
        _ = kept.append("huge", bytes: 500)
        #expect(kept.all == ["huge"] && kept.bytes == 500)
        _ = kept.append("next", bytes: 10)
        #expect(kept.all == ["next"])
    }

    @Test func aRetentionOfOneKeepsTheNewest() {
        var kept = BoundedHistory<Int>(retention: 1, budget: 20)
        for value in 0..<10 {
            let forgotten = kept.append(value, bytes: 8)
            #expect(forgotten == (value == 0 ? nil : value - 1))
        }
        #expect(kept.all == [9])
    }

    /// The ring wraps around and grows while elements come and go: order and positions hold.
    @Test func orderHoldsAcrossWrapsAndGrowth() {
        var kept = BoundedHistory<Int>(budget: 1_000)
        var next = 0
        // Sizes that vary, so the ring fills, wraps and grows at different places.
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) {
                _ = kept.append(next, bytes: 10 + (next % 5) * 20)
                next += 1
            }
            let all = kept.all
            #expect(all == Array((next - all.count)..<next))
            var visited: [Int] = []
            kept.forEach { visited.append($0) }
            #expect(visited == all)
            #expect(kept.nextPosition == next && kept.forgotten == next - all.count)
        }
    }

    @Test func positionsCountFromTheFirstElementEver() {
        var kept = BoundedHistory<String>(retention: 3)
        for value in ["a", "b", "c", "d", "e"] { _ = kept.append(value, bytes: 1) }
        #expect(kept.all == ["c", "d", "e"])
        #expect(kept.nextPosition == 5)
        let updated = kept.update(position: 3) { $0 = "D" }
        let oldest = kept.update(position: 2) { $0 = "C" }
        let forgottenOne = kept.update(position: 1) { $0 = "B" }
        let notYet = kept.update(position: 5) { $0 = "F" }
        #expect(updated && oldest && !forgottenOne && !notYet)
        #expect(kept.all == ["C", "D", "e"])
    }

    /// A renewal: as many forgotten since the last one as were kept then.
    @Test func renewalsAreCounted() {
        var kept = BoundedHistory<Int>(retention: 3)
        var seen: [Int] = []
        for value in 0..<12 {
            _ = kept.append(value, bytes: 1)
            seen.append(kept.renewals)
        }
        // Forgetting starts at the fourth element: a renewal then, and again every three forgotten.
        #expect(seen == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    }

    @Test func removeAllForgetsPositionsToo() {
        var kept = BoundedHistory<Int>(retention: 2, budget: 100)
        for value in 0..<7 { _ = kept.append(value, bytes: 1) }
        kept.removeAll()
        #expect(kept.all.isEmpty && kept.forgotten == 0 && kept.bytes == 0 && kept.nextPosition == 0)
        #expect(kept.retention == 2 && kept.budget == 100)
        _ = kept.append(7, bytes: 1)
        #expect(kept.all == [7] && kept.nextPosition == 1)
    }
}
