import Crypto
import Foundation
import Recording
import Testing

/// A recording, written and opened again: bodies inline or beside the HAR by hash, the pacing and the
/// fault kept, secrets out, and a cassette that never finished refused.
struct CassetteRecorderTests {
    static func get(_ recorder: CassetteRecorder) -> ExchangeRecording {
        recorder.exchange(
            service: "media", link: "l", connection: nil, method: "GET", url: "http://h/a", httpVersion: "HTTP/1.1",
            headers: [])
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// A large body's file that cannot be moved to its name (here something removed it meanwhile) is
    /// no body of the cassette: the recording is refused saying which file, nothing passes for it.
    @Test func aBodyThatCannotBeStoredRefusesTheCassette() throws {
        // The recording is made in a folder beside the cassette's: both inside this one.
        let parent = try TemporaryFolder.make()
        let folder = parent.appendingPathComponent("cassette")
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let large = Data(repeating: 7, count: 100_000)
        let exchange = Self.get(recorder)
        exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", "image/jpeg")])
        large.withUnsafeBytes { exchange.write($0) }
        let partials = (FileManager.default.subpaths(atPath: parent.path) ?? []).filter {
            URL(fileURLWithPath: $0).lastPathComponent.hasPrefix(".partial-")
        }
        #expect(partials.count == 1, "the body spilled to a file of its own")
        for path in partials { try FileManager.default.removeItem(at: parent.appendingPathComponent(path)) }
        exchange.finish()

        var meta = CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: [:], recordedAt: "now")
        meta.complete = true
        let error = #expect(throws: CassetteError.self) { try recorder.close(meta, timeline: Data()) }
        #expect(error?.problem.contains("could not be stored as bodies/\(Self.sha256(large))") == true)
        let stored = (FileManager.default.subpaths(atPath: parent.path) ?? []).filter {
            $0.hasSuffix(Self.sha256(large))
        }
        #expect(stored.isEmpty, "nothing passes for the body")
    }

    @Test func aRecordingOpensAgainWithItsBodiesPacingAndFault() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let small = Data("hello, photo".utf8)
        let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

        let first = recorder.exchange(
            service: "media", link: "transfer→media", connection: recorder.connectionID(), method: "GET",
            url: "http://127.0.0.1:44447/hello.txt", httpVersion: "HTTP/1.1", headers: [("Host", "x")])
        first.head(status: 200, statusText: "OK", headers: [("Content-Type", "text/plain")])
        small.withUnsafeBytes { first.write($0) }
        first.finish()

        let second = recorder.exchange(
            service: "media", link: "transfer→media", connection: recorder.connectionID(), method: "GET",
            url: "http://127.0.0.1:44447/photos/big.jpg", httpVersion: "HTTP/1.1", headers: [])
        second.head(
            status: 200, statusText: "OK", headers: [("Content-Type", "image/jpeg"), ("Content-Length", "300000")])
        large.prefix(100_000).withUnsafeBytes { second.write($0) }
        large.dropFirst(100_000).withUnsafeBytes { second.write($0) }
        second.fault(kind: "reset", how: "RST")
        second.finish()
        second.finish()  // only the first counts

        var meta = CassetteMeta(scenario: "s", harnessYmlSha256: nil, seeds: ["media.fault.1": 42], recordedAt: "now")
        meta.complete = true
        try recorder.close(meta, timeline: Data())

        let cassette = try Cassette.open(folder)
        #expect(cassette.meta?.entries == 2)
        #expect(cassette.meta?.seeds == ["media.fault.1": 42])
        let entries = cassette.har.log.entries
        #expect(
            entries.map(\.request.url) == ["http://127.0.0.1:44447/hello.txt", "http://127.0.0.1:44447/photos/big.jpg"])
        #expect(cassette.body(of: 0) == .inline(small))
        #expect(entries[0].response.content.text == "hello, photo")
        #expect(entries[1].response.content.file == "bodies/\(Self.sha256(large))")
        guard case .file(let url, let size) = cassette.body(of: 1) else {
            Issue.record("a 200 KB body is stored beside the HAR")
            return
        }
        #expect(size == large.count)
        #expect(try Data(contentsOf: url) == large)
        #expect(entries[1].writes?.map { Int($0[1]) } == [100_000, 100_000])
        #expect(entries[1].fault == HAR.Fault(kind: "reset", atByte: 200_000, how: "RST"))
        #expect(entries[1].response.bodySize == 200_000)
        #expect(entries[1].connection != entries[0].connection)
        #expect(entries.allSatisfy { abs($0.time - $0.timings.total) < 1e-9 })
        // Nothing half-made is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["bodies", "meta.json", "timeline.jsonl", "traffic.har"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("bodies").path).count == 1
        )
    }

    @Test func theSameLargeBodyIsStoredOnce() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let large = Data(repeating: 0xAB, count: 100_000)
        for _ in 0..<3 {
            let exchange = Self.get(recorder)
            exchange.head(status: 200, statusText: "OK", headers: [])
            large.withUnsafeBytes { exchange.write($0) }
            exchange.finish()
        }
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let bodies = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("bodies").path)
        #expect(bodies == [Self.sha256(large)])
    }

    @Test func secretsAreReplacedByAMarker() throws {
        let folder = try TemporaryFolder.make()
        let redactor = Redactor(secrets: [.init(name: "Parse master key", value: "sup3r-s3cret-master")])
        let recorder = try CassetteRecorder(directory: folder, redactor: redactor)
        let exchange = recorder.exchange(
            service: "parse", link: "backend→parse", connection: nil, method: "POST",
            url: "http://h/parse/push?key=sup3r-s3cret-master", httpVersion: "HTTP/1.1",
            headers: [("X-Parse-Master-Key", "sup3r-s3cret-master"), ("Authorization", "bearer eyJabc")],
            requestBody: "{\"masterKey\":\"sup3r-s3cret-master\"}", requestMimeType: "application/json")
        exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", "application/json")])
        exchange.finish()
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let har = try String(contentsOf: folder.appendingPathComponent("traffic.har"), encoding: .utf8)
        #expect(!har.contains("sup3r-s3cret-master"))
        #expect(!har.contains("eyJabc"))
        #expect(har.contains("[redacted: Parse master key]"))
        #expect(har.contains("[redacted: authorization]"))
    }

    /// A cassette keeps a harness.yml, but a folder holding only a harness.yml is the user's project:
    /// recording into it is refused, the file left where it is.
    @Test func aFolderWithOnlyAHarnessYmlIsNotACassetteToReplace() throws {
        let folder = try TemporaryFolder.make()
        let file = folder.appendingPathComponent("harness.yml")
        try Data("version: 1\n".utf8).write(to: file)
        #expect(throws: CassetteError.self) { try CassetteRecorder(directory: folder, redactor: Redactor()) }
        #expect(FileManager.default.fileExists(atPath: file.path))
        // Beside a meta.json it is a cassette's own: a new recording replaces the cassette, copy and all.
        let first = try CassetteRecorder(directory: folder.appendingPathComponent("c"), redactor: Redactor())
        Self.get(first).finish()
        try first.close(
            CassetteMeta(scenario: "first", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"),
            configuration: Data("version: 1\n".utf8))
        let second = try CassetteRecorder(directory: folder.appendingPathComponent("c"), redactor: Redactor())
        Self.get(second).finish()
        try second.close(CassetteMeta(scenario: "second", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        #expect(try Cassette.open(folder.appendingPathComponent("c")).meta?.scenario == "second")
    }

    /// Issue 32: a client that closed once it had every byte it was promised (curl does) made the
    /// whole body look cut, so a replay would not cut a range from it. Only a body short of its length is.
    @Test func aConnectionClosedAfterTheWholeBodyIsNoCut() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        for length in [10, 5] {
            let exchange = Self.get(recorder)
            exchange.head(status: 200, statusText: "OK", headers: [("Content-Length", "10")])
            exchange.write(Data(repeating: 7, count: length))
            exchange.cutShort()
            exchange.finish()
        }
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let entries = try Cassette.open(folder).har.log.entries
        #expect(entries.map(\.fault) == [nil, HAR.Fault(kind: "connectionClosed", atByte: 5, how: "stall", of: 10)])
    }

    @Test func anEarlierCassetteStaysWholeUntilTheNewOneIsClosed() throws {
        let folder = try TemporaryFolder.make()
        let first = try CassetteRecorder(directory: folder, redactor: Redactor())
        Self.get(first).finish()
        try first.close(CassetteMeta(scenario: "first", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let second = try CassetteRecorder(directory: folder, redactor: Redactor())
        Self.get(second).finish()
        Self.get(second).finish()
        #expect(try Cassette.open(folder).meta?.scenario == "first", "the new recording is not closed yet")
        try second.close(CassetteMeta(scenario: "second", harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let now = try Cassette.open(folder)
        #expect(now.meta?.scenario == "second")
        #expect(now.har.log.entries.count == 2)
        let beside = try FileManager.default.contentsOfDirectory(atPath: folder.deletingLastPathComponent().path)
        #expect(!beside.contains { $0.hasPrefix(".\(folder.lastPathComponent).recording-") })
    }

    @Test func aTextBodyWithASecretIsStoredRedactedWithItsOwnSizeAndDigest() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        recorder.redact(also: [.init(name: "Parse REST API key", value: "rest-key-1234")])
        let exchange = Self.get(recorder)
        exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", "application/json")])
        Data(#"{"restKey":"rest-key-1234","url":"/x?k=rest%2Dkey%2D1234"}"#.utf8).withUnsafeBytes { exchange.write($0) }
        exchange.finish()
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let text = try String(contentsOf: folder.appendingPathComponent("traffic.har"), encoding: .utf8)
        #expect(!text.contains("rest-key-1234"))
        #expect(!text.contains("rest%2Dkey%2D1234"))
        let cassette = try Cassette.open(folder)
        guard case .inline(let body) = cassette.body(of: 0) else {
            Issue.record("a small body is inline")
            return
        }
        #expect(String(decoding: body, as: UTF8.self).contains("[redacted: Parse REST API key]"))
        #expect(cassette.har.log.entries[0].response.bodySize == body.count)
        #expect(cassette.har.log.entries[0].response.content.sha256 == Self.sha256(body))
    }

    @Test func aFolderHoldingSomethingElseIsNotRecordedInto() throws {
        let folder = try TemporaryFolder.make()
        try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let error = try #require(throws: CassetteError.self) {
            try CassetteRecorder(directory: folder, redactor: Redactor())
        }
        #expect(error.problem.contains("not a cassette"))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("notes.txt").path))
    }

    @Test func aRecordingThatNeverClosedIsRefusedWithTheReason() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let exchange = Self.get(recorder)
        exchange.finish()
        // It is written beside the folder until closed: the folder itself holds no half cassette.
        let error = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(error.file.hasSuffix("meta.json"))
        #expect(error.problem.contains("is missing"))
    }

    @Test func aNewerFormatAndAMissingBodyAreRefused() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let exchange = Self.get(recorder)
        exchange.head(status: 200, statusText: "OK", headers: [])
        Data(repeating: 1, count: 70_000).withUnsafeBytes { exchange.write($0) }
        exchange.finish()
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        _ = try Cassette.open(folder)

        let metaURL = folder.appendingPathComponent("meta.json")
        let meta = try String(contentsOf: metaURL, encoding: .utf8)
        try meta.replacingOccurrences(of: "\"version\" : 2", with: "\"version\" : 7").write(
            to: metaURL, atomically: true, encoding: .utf8)
        let newer = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(newer.jsonPath == "$.version")
        #expect(newer.problem.contains("newer"))
        try meta.write(to: metaURL, atomically: true, encoding: .utf8)

        let bodies = folder.appendingPathComponent("bodies")
        for name in try FileManager.default.contentsOfDirectory(atPath: bodies.path) {
            try FileManager.default.removeItem(at: bodies.appendingPathComponent(name))
        }
        let missing = try #require(throws: CassetteError.self) { try Cassette.open(folder) }
        #expect(missing.file.hasSuffix("traffic.har"))
        #expect(missing.jsonPath == "$.log.entries[0].response.content._file")
        #expect(missing.problem.contains("missing"))
    }
}

enum TemporaryFolder {
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recording-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A cassette exported as one HAR: every body inline, the same bytes, readable again.
struct HARExportTests {
    @Test func everyBodyGoesInlineAndReadsBackTheSame() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        let large = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let exchange = CassetteRecorderTests.get(recorder)
        exchange.head(status: 200, statusText: "OK", headers: [("Content-Type", "image/jpeg")])
        large.withUnsafeBytes { exchange.write($0) }
        exchange.finish()
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))

        let output = folder.appendingPathComponent("export.har")
        #expect(try HARExport.selfContained(try Cassette.open(folder), to: output) == 1)
        let alone = try Cassette.open(output)
        #expect(alone.har.log.entries[0].response.content.file == nil)
        #expect(alone.body(of: 0) == .inline(large))
        #expect(alone.har.log.entries[0].writes?.count == 1, "our own fields stay")
    }
}
