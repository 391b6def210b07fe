import HarnessTimeline
import Testing

/// ``Generations``: what is kept within a count and a memory budget, a row at a time.
@Suite struct GenerationsTests {
    @Test func withoutLimitsEverythingIsKept() {
        var kept = Generations<Int>()
        for value in 0..<1_000 {
            let forgotten = kept.append(value, bytes: 1_000)
            #expect(forgotten.isEmpty)
        }
        #expect(kept.all == Array(0..<1_000))
        #expect(kept.forgotten == 0)
    }

    @Test func aRetentionKeepsAtLeastThatManyAndAtMostTwice() {
        var kept = Generations<Int>(retention: 10)
        var forgotten: [Int] = []
        for value in 0..<95 { forgotten += kept.append(value, bytes: 1) }
        // Generations of 10: 90 to 94 fill the newer, 80 to 89 the older, 0 to 79 went.
        #expect(kept.all == Array(80..<95))
        #expect(forgotten == Array(0..<80))
        #expect(kept.forgotten == 80)
        #expect((10...20).contains(kept.count))
    }

    @Test func aBudgetKeepsAtMostItsBytesAndAtLeastHalf() {
        var kept = Generations<Int>(budget: 1_000)
        for value in 0..<1_000 {
            _ = kept.append(value, bytes: 30)
            #expect(kept.bytes <= 1_000)
        }
        // 16 elements of 30 bytes fill half the budget: the newest 16 to 32 are kept.
        #expect(kept.bytes >= 500 - 30)
        #expect(kept.all.last == 999)
        #expect(kept.all == Array((1_000 - kept.count)..<1_000))
    }

    @Test func theCountOrTheBudgetWhicheverComesFirst() {
        var byCount = Generations<Int>(retention: 5, budget: 1_000_000)
        var byBudget = Generations<Int>(retention: 1_000, budget: 100)
        for value in 0..<100 {
            _ = byCount.append(value, bytes: 10)
            _ = byBudget.append(value, bytes: 10)
        }
        #expect(byCount.count <= 10)
        #expect(byBudget.bytes <= 100)
        #expect(byBudget.count <= 10)
    }

    @Test func anElementOverHalfTheBudgetIsStillKeptAsTheNewest() {
        var kept = Generations<String>(budget: 100)
        _ = kept.append("small", bytes: 10)
        _ = kept.append("huge", bytes: 80)
        #expect(kept.all == ["small", "huge"])
        _ = kept.append("next", bytes: 10)
        // The huge one filled its generation alone; the next one starts another.
        #expect(kept.all == ["huge", "next"])
        #expect(kept.bytes == 90)
    }

    @Test func aRetentionOfOneKeepsTheNewest() {
        var kept = Generations<Int>(retention: 1, budget: 20)
        for value in 0..<10 {
            let forgotten = kept.append(value, bytes: 8)
            #expect(forgotten == (value == 0 ? [] : [value - 1]))
        }
        #expect(kept.all == [9])
    }

    @Test func positionsCountFromTheFirstElementEver() {
        var kept = Generations<String>(retention: 2)
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

    @Test func turnoversAreCounted() {
        var kept = Generations<Int>(retention: 3)
        for value in 0..<10 { _ = kept.append(value, bytes: 1) }
        #expect(kept.turnovers == 3)
    }

    @Test func removeAllForgetsPositionsToo() {
        var kept = Generations<Int>(retention: 2, budget: 100)
        for value in 0..<7 { _ = kept.append(value, bytes: 1) }
        kept.removeAll()
        #expect(kept.all.isEmpty && kept.forgotten == 0 && kept.bytes == 0 && kept.nextPosition == 0)
        #expect(kept.retention == 2 && kept.budget == 100)
    }
}
