import Foundation
import Testing

@testable import Backends

#if canImport(Glibc)
import Glibc
#endif

/// Which processes are a backend's, decided from a process table: a row per rule of ``ProcessLineage``.
/// The harness is pid 100, the backend pid 200, started at tick 1,000.
@Suite struct ProcessLineageTests {
    static let harness: Int32 = 100
    static let backend: Int32 = 200

    /// Following the backend, whose start is known.
    func fresh() -> ProcessLineage { ProcessLineage(root: Self.backend, harness: Self.harness, rootStarted: 1_000) }

    func process(_ pid: Int32, parent: Int32, group: Int32? = nil, started: UInt64 = 2_000, zombie: Bool = false)
        -> ProcessRecord
    {
        ProcessRecord(pid: pid, parent: parent, group: group ?? pid, started: started, isZombie: zombie)
    }

    /// The harness, the backend leading its group, and an unrelated process older than both.
    var base: [ProcessRecord] {
        [
            process(1, parent: 0, started: 0), process(Self.harness, parent: 1, started: 10),
            process(Self.backend, parent: Self.harness, started: 1_000), process(50, parent: 1, started: 5),
        ]
    }

    /// The backend ended and another process took its pid: that process's children and group are not
    /// the backend's; what an earlier look found of the backend still is.
    @Test func anotherProcessWithTheBackendsPidIsNotTheBackend() {
        var lineage = fresh()
        let before = base + [process(201, parent: Self.backend, group: 201)]
        #expect(lineage.claim(before) { _ in false }.running == [201])
        let reused = process(Self.backend, parent: 1, started: 9_000)
        let after =
            [process(1, parent: 0, started: 0), process(Self.harness, parent: 1, started: 10), reused]
            + [process(201, parent: Self.harness, group: 201), process(9_001, parent: Self.backend, started: 9_001)]
            + [process(9_002, parent: 1, group: Self.backend, started: 9_002)]
        #expect(lineage.claim(after) { _ in false }.running == [201])
    }

    @Test func aChildThatCalledSetsidIsStillTheBackendsThroughItsParent() {
        var lineage = fresh()
        // 201 called setsid (a group of its own); 202 is its child.
        let table = base + [process(201, parent: Self.backend), process(202, parent: 201, group: 201)]
        let claim = lineage.claim(table) { _ in false }
        #expect(claim == ProcessLineage.Claim(running: [201, 202], outsideGroup: [201, 202], endedOrphans: []))
    }

    @Test func aDoubleForkThatKeptTheGroupIsTheBackendsThroughItsGroup() {
        var lineage = fresh()
        // Its parent ended: the harness, as subreaper, adopted it.
        let table = base + [process(203, parent: Self.harness, group: Self.backend)]
        let claim = lineage.claim(table) { _ in false }
        #expect(claim == ProcessLineage.Claim(running: [203], outsideGroup: [], endedOrphans: []))
    }

    @Test func anOrphanThatLeftTheGroupIsTheBackendsThroughItsMarkAndSoAreItsChildren() {
        var lineage = fresh()
        // 204 called setsid, then its parent ended; 205 is its child; 300 is another child of the harness
        // (an app, another run's backend) without the mark.
        let table =
            base + [
                process(204, parent: Self.harness), process(205, parent: 204, group: 204),
                process(300, parent: Self.harness),
            ]
        let claim = lineage.claim(table) { $0.pid == 204 }
        #expect(claim.running == [204, 205])
    }

    @Test func theMarkIsAskedAboutOnlyProcessesNoOtherRuleTookThatRunAndAreYoungEnough() {
        var lineage = fresh()
        let table =
            base + [
                process(201, parent: Self.backend), process(206, parent: Self.harness, zombie: true),
                process(300, parent: Self.harness), process(60, parent: 1, started: 999),
            ]
        var asked: [Int32] = []
        _ = lineage.claim(table) { record in
            asked.append(record.pid)
            return false
        }
        #expect(asked == [300])
    }

    @Test func aProcessOlderThanTheBackendIsNeverItsEvenWithTheMark() {
        var lineage = fresh()
        let claim = lineage.claim(base + [process(150, parent: 1, started: 500)]) { _ in true }
        #expect(claim.running.isEmpty)
    }

    @Test func theBackendTheHarnessAndInitAreNeverClaimed() {
        var lineage = fresh()
        // Even were they young enough and marked (a harness run as another harness's backend carries its mark).
        let table = [
            process(1, parent: 0), process(Self.harness, parent: 1),
            process(Self.backend, parent: Self.harness, group: Self.backend),
        ]
        let claim = lineage.claim(table) { _ in true }
        #expect(claim.isSettled)
    }

    @Test func anOrphanSeenBeforeItsParentEndedStaysTheBackendsWithoutItsMark() {
        var lineage = fresh()
        // 202 cleared its environment; its parent 201 was alive at the first look.
        let first = base + [process(201, parent: Self.backend), process(202, parent: 201, group: 201, started: 2_001)]
        #expect(lineage.claim(first) { _ in false }.running == [201, 202])
        let adopted = base + [process(202, parent: Self.harness, group: 201, started: 2_001)]
        #expect(lineage.claim(adopted) { _ in false }.running == [202])
        // The same pid later, another process: not the one seen.
        let reused = base + [process(202, parent: Self.harness, started: 9_000)]
        #expect(lineage.claim(reused) { _ in false }.running.isEmpty)
    }

    @Test func theHarnessReapsOnlyEndedOrphansOfTheBackendThatItAdopted() {
        var lineage = fresh()
        let table =
            base + [
                // A running child of the backend, and its ended child: the child reaps it (or ends first,
                // and it comes to the harness at a later look).
                process(201, parent: Self.backend), process(207, parent: 201, zombie: true),
                // An ended orphan of the backend's group, adopted by the harness.
                process(208, parent: Self.harness, group: Self.backend, zombie: true),
                // An ended orphan of someone else's (an app's), adopted by the harness: not this backend's.
                process(209, parent: Self.harness, zombie: true),
            ]
        let claim = lineage.claim(table) { _ in false }
        #expect(claim == ProcessLineage.Claim(running: [201], outsideGroup: [201], endedOrphans: [208]))
        #expect(!claim.isSettled)
        #expect(lineage.claim(base) { _ in false }.isSettled)
    }

    @Test func theBackendsStartIsLearnedFromTheFirstTableThatListsIt() {
        var known = ProcessLineage(root: Self.backend, harness: Self.harness)
        #expect(known.claim(base + [process(150, parent: 1, started: 500)]) { _ in true }.running.isEmpty)
        #expect(known.rootStarted == 1_000)
        // Before the backend is seen (it ended at once), no process is too old.
        var unseen = ProcessLineage(root: Self.backend, harness: Self.harness)
        #expect(unseen.claim([process(150, parent: 1, started: 500)]) { _ in true }.running == [150])
    }

    @Test func aStatLineIsReadAfterTheCommandsLastParenthesis() {
        let line = "4242 (my (odd) name) S 100 4242 4242 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 98765 1000 5\n"
        #expect(ProcessRecord(stat: line) == ProcessRecord(pid: 4242, parent: 100, group: 4242, started: 98_765))
        let zombie = "77 (sh) Z 100 77 77 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 5 0 0\n"
        #expect(ProcessRecord(stat: zombie)?.isZombie == true)
        #expect(ProcessRecord(stat: "") == nil)
        #expect(ProcessRecord(stat: "4242 (cut") == nil)
        #expect(ProcessRecord(stat: "4242 (short) S 100 4242") == nil)
    }

    @Test func theMarkIsAWholeEntryOfTheEnvironment() {
        let environment = Array("A=1\0HARNESS_BACKEND_LINEAGE=api-1\0B=2".utf8)
        #expect(ProcessRecord.environment(environment, carries: "HARNESS_BACKEND_LINEAGE=api-1"))
        #expect(ProcessRecord.environment(environment, carries: "B=2"))
        #expect(!ProcessRecord.environment(environment, carries: "HARNESS_BACKEND_LINEAGE=api"))
        #expect(!ProcessRecord.environment(environment, carries: "HARNESS_BACKEND_LINEAGE=api-12"))
    }

    /// The reader against this very process, as Linux shows it.
    @Test func theTableListsThisProcessWithItsParent() throws {
        let table = ProcessTable.snapshot()
        let this = try #require(table.first { $0.pid == getpid() })
        #expect(this.parent == getppid() && this.group == getpgrp() && !this.isZombie)
    }
}
