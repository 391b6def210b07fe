import Foundation
import Recording
import Testing

/// What the links other than media leave in a cassette: an HTTP/2 exchange's stream, the apps'
/// transcripts, and the pushes a replay sends again, in order and when they are due.
struct LinksAndPushesTests {
    static func push(_ recorder: CassetteRecorder, body: String, path: String = "/parse/push", link: String) {
        let exchange = recorder.exchange(
            service: "parse", link: link, connection: nil, method: "POST", url: "http://127.0.0.1:1337\(path)",
            httpVersion: "HTTP/1.1", headers: [("X-Parse-Master-Key", "the-master-key")], requestBody: body,
            requestMimeType: "application/json")
        exchange.head(status: 200, statusText: "OK", headers: [])
        exchange.write(Data("{\"result\":true}".utf8))
        exchange.finish()
    }

    @Test func anHTTP2StreamAndTheAppsTranscriptsAreKeptAndSecretsLeftOut() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(
            directory: folder, redactor: Redactor(secrets: [.init(name: "Parse client key", value: "client-key-1")]))
        let provider = recorder.exchange(
            service: "apns", link: "provider→apns", connection: recorder.connectionID(), method: "POST",
            url: "https://127.0.0.1:2197/3/device/abc", httpVersion: "HTTP/2",
            headers: [("authorization", "bearer eyJ.token"), ("apns-topic", "com.example")],
            requestBody: "{\"aps\":{\"content-available\":1}}")
        provider.stream(3)
        provider.head(status: 400, statusText: "BadDeviceToken", headers: [("apns-id", "X")])
        provider.write(Data("{\"reason\":\"BadDeviceToken\"}".utf8))
        provider.finish()
        recorder.transcribe(app: "com.example.App", from: .app, line: Data("{\"method\":\"hello\"}\n".utf8))
        recorder.transcribe(
            app: "com.example.App", from: .device, line: Data("{\"env\":\"client-key-1\"}".utf8))
        recorder.transcribe(app: "../escape", from: .app, line: Data("x".utf8))
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))

        let cassette = try Cassette.open(folder)
        let entry = try #require(cassette.har.log.entries.first)
        #expect(entry.h2 == HAR.HTTP2(streamId: 3))
        #expect(entry.requestHeader("authorization") == "[redacted: authorization]")
        #expect(entry.response.status == 400)
        #expect(cassette.body(of: 0) == .inline(Data("{\"reason\":\"BadDeviceToken\"}".utf8)))

        #expect(cassette.transcriptNames == ["_.._escape", "com.example.App"])
        let lines = try cassette.transcript(of: "com.example.App")
        #expect(lines.map(\.from) == [.app, .device])
        #expect(lines.map(\.line) == ["{\"method\":\"hello\"}", "{\"env\":\"[redacted: Parse client key]\"}"])
        #expect(lines[0].at <= lines[1].at)
        // A name that is a path stays inside transcripts/.
        let escaped = folder.appendingPathComponent("transcripts/_.._escape.jsonl")
        #expect(FileManager.default.fileExists(atPath: escaped.path))
    }

    @Test func aTranscriptLineThatIsNotJSONIsReportedWithItsLine() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        recorder.transcribe(app: "app", from: .app, line: Data("{}".utf8))
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let file = folder.appendingPathComponent("transcripts/app.jsonl")
        try (String(contentsOf: file, encoding: .utf8) + "{not json\n").write(
            to: file, atomically: true, encoding: .utf8)
        let cassette = try Cassette.open(folder)
        #expect(throws: CassetteError.self) { try cassette.transcript(of: "app") }
        do {
            _ = try cassette.transcript(of: "app")
        } catch let error as CassetteError {
            #expect(error.description == "\(file.path) at line 2: is not a transcript line")
        }
    }

    /// The pushes a replay sends: a backend's `POST /push` to Parse, in the order sent, and nothing else.
    @Test func theRecordedPushesAreTheBackendsPushRequestsInOrder() throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(directory: folder, redactor: Redactor())
        Self.push(recorder, body: "{\"installation\":1}", path: "/parse/classes/_Installation", link: "app→parse")
        Self.push(recorder, body: "{\"data\":{\"n\":1}}", link: "backend→parse")
        Self.push(recorder, body: "{\"data\":{\"n\":2}}", link: "backend→parse")
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let cassette = try Cassette.open(folder)

        let recorded = RecordedPushes(entries: cassette.har.log.entries)
        #expect(
            recorded.pushes.map { String(decoding: $0.body, as: UTF8.self) } == [
                "{\"data\":{\"n\":1}}", "{\"data\":{\"n\":2}}",
            ])
        #expect(recorded.pushes.map(\.entry) == [1, 2])
        #expect(recorded.pushes[0].offset <= recorded.pushes[1].offset)
        // The master key that sent them is not in the cassette; a replay sends with its own.
        #expect(cassette.har.log.entries[1].requestHeader("X-Parse-Master-Key") == "[redacted: Parse master key]")
    }

    @Test func eachPushIsDueAtItsRecordedOffsetFromTheReplaysStart() {
        func entry(
            _ offset: Double, link: String = "backend→parse", method: String = "POST", path: String = "/parse/push"
        )
            -> HAR.Entry
        {
            var entry = HAR.Entry(
                startedDateTime: "2026-11-24T00:00:00.000Z",
                request: HAR.Request(
                    method: method, url: "http://h\(path)", httpVersion: "HTTP/1.1", headers: [],
                    postData: HAR.PostData(mimeType: "application/json", text: "{\"at\":\(offset)}")),
                response: HAR.Response(
                    status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [],
                    content: HAR.Content(size: 0, mimeType: "")),
                timings: HAR.Timings(send: 0, wait: 0, receive: 0))
            entry.offset = offset
            entry.link = link
            return entry
        }
        // Rows: sent later but listed first, a GET of /push, another link's POST, and one more push.
        let recorded = RecordedPushes(entries: [
            entry(2500), entry(100, method: "GET"), entry(300, link: "provider→apns"), entry(1250.4),
        ])
        #expect(recorded.pushes.map(\.offset) == [1250.4, 2500])
        let start = ContinuousClock.now
        let schedule = PushSchedule(recorded, startingAt: start)
        let first = schedule.take()
        #expect(first?.due == start.advanced(by: .milliseconds(1250)))
        #expect(first.map { String(decoding: $0.push.body, as: UTF8.self) } == "{\"at\":1250.4}")
        #expect(schedule.take()?.due == start.advanced(by: .milliseconds(2500)))
        #expect(schedule.take() == nil)
        #expect(schedule.taken == 2)
    }
}

/// What a client sends is recorded so that the cassette stays readable, and a transcript cut mid-line
/// by a killed process goes on with whole lines.
struct RecordedInputTests {
    @Test(arguments: [
        "http://127.0.0.1:1337/parse/classes/_Installation?where={\"deviceType\":\"ios\"}",
        "http://127.0.0.1:1337/parse/push?key=secret-value-1",
        "http://127.0.0.1:1337/a%zz?b=c d",
    ])
    func anOddRequestTargetStillMakesAReadableCassette(_ url: String) throws {
        let folder = try TemporaryFolder.make()
        let recorder = try CassetteRecorder(
            directory: folder, redactor: Redactor(secrets: [.init(name: "Parse master key", value: "secret-value-1")]))
        let exchange = recorder.exchange(
            service: "parse", link: "app→parse", connection: nil, method: "GET", url: url, httpVersion: "HTTP/1.1",
            headers: [])
        exchange.head(status: 200, statusText: "OK", headers: [])
        exchange.finish()
        try recorder.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        let recorded = try #require(try Cassette.open(folder).har.log.entries.first).request.url
        #expect(URL(string: recorded) != nil)
        #expect(!recorded.contains("secret-value-1"))
        #expect((recorded.removingPercentEncoding ?? recorded).contains("deviceType") == url.contains("deviceType"))
    }

    @Test func aTranscriptCutMidLineGoesOnWithWholeLines() throws {
        let folder = try TemporaryFolder.make()
        let first = try CassetteRecorder(directory: folder, redactor: Redactor())
        first.transcribe(app: "app", from: .app, line: Data("{\"n\":1}".utf8))
        try first.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        // The process that added to it was killed halfway through a line.
        let file = folder.appendingPathComponent("transcripts/app.jsonl")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"at\":1,\"fr".utf8))
        try handle.close()

        let adding = try CassetteRecorder(directory: folder, redactor: Redactor(), keeping: try Cassette.open(folder))
        adding.transcribe(app: "app", from: .device, line: Data("{\"n\":2}".utf8))
        try adding.close(CassetteMeta(scenario: nil, harnessYmlSha256: nil, seeds: [:], recordedAt: "now"))
        adding.transcribe(app: "app", from: .device, line: Data("{\"n\":3}".utf8))  // closed: dropped

        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.last?.contains("{\\\"n\\\":2}") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("traffic.har.journal").path))
    }
}
