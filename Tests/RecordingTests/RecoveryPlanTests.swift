import Foundation
import Recording
import Testing

/// The rules for what a killed recording left beside a cassette folder, as values: whose a partial is,
/// what its journal holds, and what becomes of it.
struct RecoveryPlanTests {
    /// Process 100 runs; every other is gone.
    static func isAlive(_ pid: Int32) -> Bool { pid == 100 }

    static func partial(
        _ pid: Int32?, records: Int = 0, transcripts: Int = 0, closed: Bool = false, modified: Double = 0,
        tag: String = "AB12CD34"
    ) -> PartialRecording {
        PartialRecording(
            name: ".cassette.recording-\(pid.map { "\($0)-" } ?? "")\(tag)", pid: pid, tag: tag, records: records,
            transcripts: transcripts, closed: closed, modified: modified)
    }

    static func decide(
        _ partials: [PartialRecording], free: Bool = true, purpose: RecoveryPlan.Purpose = .replaying,
        siblings: Set<String> = []
    ) -> [RecoveryPlan.Step] {
        RecoveryPlan.decide(
            partials, directory: "cassette", directoryIsFree: free, purpose: purpose, siblings: siblings,
            isAlive: Self.isAlive
        ).steps
    }

    @Test func aRunningProcesssPartialIsLeftAlone() {
        let running = Self.partial(100, records: 3)
        #expect(Self.decide([running]) == [.leave(running, .running(pid: 100))])
    }

    @Test func aPartialWithoutAProcessIDIsLeftAlone() {
        let older = Self.partial(nil, records: 3)
        #expect(Self.decide([older]) == [.leave(older, .noProcessID)])
    }

    @Test func aDeadProcesssEmptyPartialIsCleared() {
        let empty = Self.partial(7)
        #expect(Self.decide([empty]) == [.clear(empty)])
    }

    @Test(arguments: [
        RecoveryPlanTests.partial(7, records: 1), RecoveryPlanTests.partial(7, transcripts: 1),
        RecoveryPlanTests.partial(7, closed: true),
    ])
    func aDeadProcesssPartialHoldingAnythingIsRecovered(_ found: PartialRecording) {
        #expect(Self.decide([found]) == [.recover(found, into: .directory)])
    }

    @Test func aRecoveryGoesBesideAFolderThatIsNotFree() {
        let dead = Self.partial(7, records: 2)
        #expect(Self.decide([dead], free: false) == [.recover(dead, into: .beside("cassette.recovered-7"))])
    }

    @Test func aRecordingCommandsRecoveryGoesBesideTheFolderItWillReplace() {
        let dead = Self.partial(7, records: 2)
        #expect(
            Self.decide([dead], free: true, purpose: .recording) == [
                .recover(dead, into: .beside("cassette.recovered-7"))
            ])
    }

    @Test func theNewestRecoveryTakesTheFreeFolderAndTheOthersGoBeside() {
        let older = Self.partial(7, records: 2, modified: 10, tag: "OLD")
        let newer = Self.partial(8, records: 1, modified: 20, tag: "NEW")
        #expect(
            Self.decide([older, newer]) == [
                .recover(newer, into: .directory), .recover(older, into: .beside("cassette.recovered-7")),
            ])
    }

    @Test func aBesideNameAlreadyTakenGetsTheTagThenANumber() {
        let dead = Self.partial(7, records: 2, tag: "T1")
        let taken: Set = ["cassette.recovered-7", "cassette.recovered-7-T1"]
        #expect(
            Self.decide([dead], free: false, siblings: taken) == [
                .recover(dead, into: .beside("cassette.recovered-7-T1-2"))
            ])
    }

    @Test(
        arguments: [
            (".cassette.recording-4242-AB12CD34", 4242, "AB12CD34"), (".cassette.recording-AB12CD34", nil, "AB12CD34"),
        ] as [(String, Int32?, String)])
    func aPartialsNameSaysWhoseItIs(name: String, pid: Int32?, tag: String) throws {
        let owner = try #require(PartialRecording.owner(ofName: name, directory: "cassette"))
        #expect(owner.pid == pid)
        #expect(owner.tag == tag)
    }

    @Test(arguments: [
        ".cassette.recording-0-AB", ".other.recording-4242-AB", ".cassette.recording-1-x.recording-2-T",
        "cassette.recovered-4242", ".cassette.recording-", ".cassette.recording-42-",
    ])
    func otherNamesAreNoPartialOfTheFolder(name: String) {
        #expect(PartialRecording.owner(ofName: name, directory: "cassette") == nil)
    }

    @Test func aPartialsNameReadsBack() throws {
        let name = PartialRecording.name(directory: "media", pid: 31337, tag: "C0FFEE12")
        #expect(name == ".media.recording-31337-C0FFEE12")
        let owner = try #require(PartialRecording.owner(ofName: name, directory: "media"))
        #expect(owner.pid == 31337 && owner.tag == "C0FFEE12")
    }
}

/// A journal read as far as it is whole: a record cut short at the end is dropped and counted, a whole
/// line that is no entry is named by its number.
struct JournalReadingTests {
    static func line(_ url: String) throws -> Data {
        let entry = HAR.Entry(
            startedDateTime: "2026-01-01T00:00:00.000Z",
            request: HAR.Request(method: "GET", url: url, httpVersion: "HTTP/1.1", headers: []),
            response: HAR.Response(
                status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [],
                content: HAR.Content(size: 0, mimeType: "")),
            timings: HAR.Timings(send: 0, wait: 1, receive: 0))
        return try JSONEncoder().encode(entry) + Data("\n".utf8)
    }

    @Test func aTornLastRecordIsDroppedAndCountedAndAnUnreadableLineNamed() throws {
        let torn = Data(#"{"startedDateTime":"2026-01-"#.utf8)
        let journal = try Self.line("http://h/a") + Data("not json\n".utf8) + Self.line("http://h/b") + torn
        let reading = JournalReading.read(journal)
        #expect(reading.entries.map(\.request.url) == ["http://h/a", "http://h/b"])
        #expect(reading.tornBytes == torn.count)
        #expect(reading.unreadableLines == [2])
        let measured = JournalReading.measure(journal)
        #expect(measured.records == 3 && measured.tornBytes == torn.count)
    }

    @Test func aJournalEndingWithItsNewlineHasNoTornTail() throws {
        let journal = try Self.line("http://h/a") + Data("\n".utf8)
        let reading = JournalReading.read(journal)
        #expect(reading.entries.count == 1)
        #expect(reading.tornBytes == 0 && reading.unreadableLines.isEmpty)
        #expect(JournalReading.measure(Data()).records == 0)
    }
}
