import Crypto
import Foundation
import HarnessTimeline
import MediaServer
import Recording
import TestSupport
import Testing

/// The media server records what it serves into a cassette and answers from it again with the folder
/// gone: the same statuses, headers and bytes, paced and cut as recorded. curl is the client throughout.
@Suite struct MediaServerCassetteTests {
    static let body: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let photo = "/photos/dailyphoto.jpg"

    /// A server recording into a new cassette, over a fresh copy of the test photo.
    func recordingServer(faults: [MediaFault] = [], throttle: Int? = nil) async throws
        -> (MediaServer, CassetteRecorder, URL, Timeline)
    {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        let cassette = try PackagePaths.temporaryDirectory()
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.faults = faults
        configuration.throttleBytesPerSecond = throttle
        let recorder = try CassetteRecorder(directory: cassette, redactor: Redactor())
        configuration.recorder = recorder
        let timeline = Timeline()
        return (
            try await MediaServer.start(configuration: configuration, timeline: timeline), recorder, cassette, timeline
        )
    }

    /// Stops the recording server, closes the cassette and deletes the folder it served, so that a
    /// replay can only answer from the cassette.
    func finish(_ server: MediaServer, _ recorder: CassetteRecorder) async throws {
        await server.close()
        var meta = CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "test")
        meta.complete = true
        try recorder.close(meta)
        try FileManager.default.removeItem(at: server.configuration.root)
    }

    func replayServer(_ cassette: URL) async throws -> (MediaServer, Timeline) {
        var configuration = MediaServerConfiguration(root: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        configuration.replay = MediaReplay(cassette: try Cassette.open(cassette))
        let timeline = Timeline()
        return (try await MediaServer.start(configuration: configuration, timeline: timeline), timeline)
    }

    /// curl's view of a request: the status line and the headers that matter, and the body's bytes.
    func fetch(_ url: String, _ arguments: [String] = []) async throws -> (head: [String], body: Data, exit: Int32) {
        let folder = try PackagePaths.temporaryDirectory()
        let output = folder.appendingPathComponent("body")
        let result = try await ChildProcess.run(
            "curl", ["--silent", "--dump-header", "-", "--output", output.path] + arguments + [url])
        let kept = ["content-length", "content-range", "content-type", "etag", "last-modified", "accept-ranges"]
        let head = result.standardOutput.lowercased().split(separator: "\r\n").map(String.init).filter { line in
            line.hasPrefix("http/") || kept.contains { line.hasPrefix($0 + ":") }
        }
        return (head, (try? Data(contentsOf: output)) ?? Data(), result.status)
    }

    static let requests: [[String]] = [
        [], ["--range", "100-109"], ["--head"], ["--range", "300000-"], ["-H", "If-None-Match: \"nope\""],
    ]

    @Test func aReplayServesTheSameStatusesHeadersAndBytesWithTheFolderGone() async throws {
        let (recording, recorder, cassette, _) = try await recordingServer()
        var recorded: [(head: [String], body: Data, exit: Int32)] = []
        for arguments in Self.requests { recorded.append(try await fetch(recording.url + Self.photo, arguments)) }
        recorded.append(try await fetch(recording.url + "/missing.jpg"))
        try await finish(recording, recorder)
        #expect(recorded[0].body == Data(Self.body))
        #expect(recorded[1].head.first?.hasPrefix("http/1.1 206") == true)
        #expect(recorded[3].head.first?.hasPrefix("http/1.1 416") == true)

        let (replay, _) = try await replayServer(cassette)
        for (index, arguments) in Self.requests.enumerated() {
            let again = try await fetch(replay.url + Self.photo, arguments)
            #expect(again.head == recorded[index].head, "\(arguments)")
            // For HEAD, curl writes the headers to the output file, a fresh Date among them.
            if !arguments.contains("--head") { #expect(again.body == recorded[index].body, "\(arguments)") }
        }
        let missing = try await fetch(replay.url + "/missing.jpg")
        #expect(missing.head == recorded[5].head)
        await replay.close()
    }

    @Test func everyBodyInTheHARHashesToWhatWasServed() async throws {
        let (recording, recorder, cassette, _) = try await recordingServer()
        let whole = try await fetch(recording.url + Self.photo)
        let part = try await fetch(recording.url + Self.photo, ["--range", "0-999"])
        try await finish(recording, recorder)
        let opened = try Cassette.open(cassette)
        let digests = opened.har.log.entries.map { $0.response.content.sha256 }
        #expect(digests == [Self.sha256(whole.body), Self.sha256(part.body)])
        guard case .file(let url, _) = opened.body(of: 0) else {
            Issue.record("a 200 KB body is stored beside the HAR")
            return
        }
        #expect(Self.sha256(try Data(contentsOf: url)) == Self.sha256(Data(Self.body)))
    }

    @Test func aRecordedResetCutsTheReplayAtTheSameByte() async throws {
        var reset = MediaFault(.reset, path: Self.photo, count: 1)
        reset.afterBytes = 70_000
        let (recording, recorder, cassette, _) = try await recordingServer(faults: [reset])
        let cut = try await fetch(recording.url + Self.photo)
        let resumed = try await fetch(recording.url + Self.photo, ["--range", "70000-"])
        try await finish(recording, recorder)
        #expect(cut.exit == 56, "curl reports a reset as 56")
        #expect(cut.body.count == 70_000)

        let (replay, timeline) = try await replayServer(cassette)
        let again = try await fetch(replay.url + Self.photo)
        let resumedAgain = try await fetch(replay.url + Self.photo, ["--range", "70000-"])
        await replay.close()
        #expect(again.exit == 56)
        #expect(again.body == cut.body)
        #expect(again.head == cut.head)
        #expect(resumedAgain.body == resumed.body)
        #expect(cut.body + resumedAgain.body == Data(Self.body))
        let fired = timeline.events.filter { $0.kind == .mediaFaultFired }
        #expect(fired.map { $0["atByte"] } == ["70000"])
        #expect(fired.map { $0["how"] } == ["RST"])
        #expect(fired.map { $0["of"] } == ["200000"])
    }

    @Test func aThrottledTransferIsPacedAsRecorded() async throws {
        let (recording, recorder, cassette, _) = try await recordingServer(throttle: 100_000)
        _ = try await fetch(recording.url + Self.photo)
        try await finish(recording, recorder)
        let entry = try #require(try Cassette.open(cassette).har.log.entries.first)
        let writes = try #require(entry.writes)
        #expect(writes.count > 5, "a throttled body goes out in many writes")
        let lastWrite = try #require(writes.last?[0])
        #expect(lastWrite > 1000, "200 KB at 100 KB/s takes over a second")

        let (replay, timeline) = try await replayServer(cassette)
        _ = try await fetch(replay.url + Self.photo)
        await replay.close()
        // Load can only make the replay slower: it cannot come in under the recorded pace.
        let request = try #require(timeline.events.first { $0.kind == .mediaRequest })
        let finished = try #require(timeline.events.first { $0.kind == .mediaResponseFinished })
        #expect((finished.elapsed - request.elapsed) * 1000 >= lastWrite * 0.95)
        #expect(finished["bytes"] == "200000")
    }

    @Test func aRequestTheCassetteLacksGetsTheDocumentedAnswerAtOnce() async throws {
        let (recording, recorder, cassette, _) = try await recordingServer()
        _ = try await fetch(recording.url + Self.photo)
        try await finish(recording, recorder)
        let (replay, timeline) = try await replayServer(cassette)
        let result = try await ChildProcess.run(
            "curl", ["--silent", "--include", replay.url + "/photos/other.jpg"], timeout: .seconds(30))
        await replay.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 502"))
        #expect(result.standardOutput.contains("X-PushHarness-Not-Recorded: GET /photos/other.jpg"))
        #expect(result.standardOutput.contains("the nearest recorded request is GET /photos/dailyphoto.jpg"))
        let event = try #require(timeline.events.first { $0.kind == .mediaNotRecorded })
        #expect(event["nearest"] == "GET /photos/dailyphoto.jpg")
    }

    @Test func anotherToolsHARIsServedWithItsDecodedBody() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let har = folder.appendingPathComponent("flows.har")
        try Data(
            """
            {"log": {"version": "1.2", "creator": {"name": "mitmproxy", "version": "12.3.1"}, "entries": [{
              "startedDateTime": "2026-11-24T08:00:00.1+00:00", "time": 1.5,
              "request": {"method": "GET", "url": "https://example.org/a/b.bin?x=1", "httpVersion": "HTTP/2.0",
                "cookies": [], "headers": [], "queryString": [], "headersSize": -1, "bodySize": 0},
              "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2.0", "cookies": [],
                "headers": [{"name": "content-type", "value": "application/octet-stream"},
                            {"name": "content-encoding", "value": "gzip"}, {"name": "content-length", "value": "99"}],
                "content": {"size": 5, "mimeType": "application/octet-stream", "text": "AAECA/8=", "encoding": "base64"},
                "redirectURL": "", "headersSize": -1, "bodySize": 99},
              "cache": {}, "timings": {"send": 0.5, "wait": 0.5, "receive": 0.5}}]}}
            """.utf8
        ).write(to: har)
        let (replay, _) = try await replayServer(har)
        let result = try await fetch(replay.url + "/a/b.bin?x=1")
        await replay.close()
        #expect(result.head.first?.hasPrefix("http/1.1 200") == true)
        #expect(result.head.contains("content-length: 5"))
        #expect(result.body == Data([0, 1, 2, 3, 255]))
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
}
