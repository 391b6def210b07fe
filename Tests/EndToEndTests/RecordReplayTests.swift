import Crypto
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `harness run --record`, `harness replay` and `harness diff` as a user runs them: the recorded world
/// played again, a random fault at the same byte, a changed app caught at its first divergence, no
/// secret in the cassette, bad cassettes refused with the file and the JSON path, and Ctrl-C leaving a
/// cassette that is whole up to the interruption.
@Suite struct RecordReplayTests {
    /// Replays share the machine with the rest of the suite: the timing of the app itself is not what
    /// these tests are about (the comparison's timing rule has its own tests), so a replay here allows
    /// 10 s per gap instead of the default 2 s.
    static let tolerance = ["--tolerance", "10"]

    static func events(_ file: URL) throws -> [[String: Any]] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    static func attributes(_ events: [[String: Any]], _ kind: String) -> [[String: String]] {
        events.filter { $0["kind"] as? String == kind }.compactMap { $0["attributes"] as? [String: String] }
    }

    /// Every file under `folder`, as bytes.
    static func files(in folder: URL) -> [(String, Data)] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        var files: [(String, Data)] = []
        while let url = enumerator?.nextObject() as? URL {
            if let data = try? Data(contentsOf: url), !url.hasDirectoryPath { files.append((url.path, data)) }
        }
        return files
    }

    @Test func aRecordedSilentPushPhotoReplaysEquivalentTenTimesInARow() async throws {
        let cassette = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let (recording, reports) = try await HarnessCommand.runCatalogueScenario(
            "silent-push-photo", ["--record", cassette.path])
        #expect(recording.status == 0, "\(recording.transcript)")

        let meta = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("meta.json")))
                as? [String: Any])
        #expect(meta["scenario"] as? String == "silent-push-photo")
        #expect(meta["complete"] as? Bool == true)
        #expect(meta["outcome"] as? String == "PASS")
        #expect(meta["version"] as? Int == 2)
        let run = try #require(meta["run"] as? [String: Any], "how the run was made: \(meta)")
        #expect(run["scenario"] as? String == "silent-push-photo" && run["network"] == nil)
        #expect(run["baseDirectory"] as? String == PackagePaths.root.standardizedFileURL.path)

        // The photo is in the HAR by its hash, and the hash is the fixture's.
        let har = try String(contentsOf: cassette.appendingPathComponent("traffic.har"), encoding: .utf8)
        let photo = try Data(
            contentsOf: PackagePaths.root.appendingPathComponent("Fixtures/media/photos/dailyphoto.jpg"))
        let digest = ScenarioDigest.sha256(photo)
        #expect(har.contains("\"_sha256\" : \"\(digest)\""))
        #expect(try Data(contentsOf: cassette.appendingPathComponent("bodies/\(digest)")) == photo)

        // No secret of the run's configuration anywhere: Parse's keys from harness.yml, and the APNs
        // signing key FakeAPNs wrote for the run.
        var secrets = ["nasa-tv-master-key", "nasa-tv-client-key", "nasa-tv-rest-key"]
        let credentials = reports.appendingPathComponent("state/apns")
        for name in try FileManager.default.contentsOfDirectory(atPath: credentials.path) where name.hasSuffix(".p8") {
            let key = try String(contentsOf: credentials.appendingPathComponent(name), encoding: .utf8)
            secrets += key.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        }
        #expect(secrets.count > 3, "the run's .p8 key was found")
        for (path, data) in Self.files(in: cassette) {
            for secret in secrets {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(path) holds the secret \(secret)")
            }
        }

        try Self.checkEveryLinkIsRecorded(in: cassette)
        // Every link's entries, HTTP/2 and deliveries included, load in haralyzer and pass the schema.
        let check = try await ChildProcess.run(
            PackagePaths.python,
            [PackagePaths.root.appendingPathComponent("Tests/Conformance/har_check.py").path, cassette.path])
        #expect(check.status == 0, "\(check.transcript)")

        for round in 1...10 {
            let replay = try await HarnessCommand.run(
                [
                    "replay", cassette.path, "--ephemeral-ports", "--skip-build", "--report-dir",
                    try PackagePaths.temporaryDirectory("replay\(round)").path,
                ] + Self.tolerance)
            #expect(replay.status == 0, "round \(round): \(replay.transcript)")
            #expect(replay.standardOutput.contains("replay: equivalent to the recording"), "round \(round)")
        }

        // harness diff agrees: the recording's report and the cassette are the same run.
        let diff = try await HarnessCommand.run(["diff", reports.path, cassette.path])
        #expect(diff.status == 0, "\(diff.transcript)")
        #expect(diff.standardOutput.hasPrefix("equivalent"))
    }

    /// Every hop of the chain is in the HAR, with what HAR cannot say in its `_` fields, and the app's
    /// device-protocol transcript is beside it.
    static func checkEveryLinkIsRecorded(in cassette: URL) throws {
        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        func on(_ link: String) -> [[String: Any]] { entries.filter { $0["_link"] as? String == link } }
        func request(_ entry: [String: Any]?) -> [String: Any] { entry?["request"] as? [String: Any] ?? [:] }
        func headers(_ message: [String: Any]) -> [String: String] {
            let list = message["headers"] as? [[String: String]] ?? []
            return Dictionary(list.map { ($0["name", default: ""].lowercased(), $0["value", default: ""]) }) { $1 }
        }
        // In the order the chain went.
        let links = ["app→parse", "backend→parse", "provider→apns", "apns→device", "device→media"]
        let firsts = links.map { link in on(link).compactMap { $0["_offset"] as? Double }.min() }
        #expect(firsts.allSatisfy { $0 != nil }, "links: \(entries.map { $0["_link"] ?? "?" })")
        #expect(firsts.compactMap { $0 } == firsts.compactMap { $0 }.sorted(), "\(links) began at \(firsts)")

        let installation = request(on("app→parse").first)
        #expect((installation["url"] as? String)?.hasSuffix("/parse/classes/_Installation") == true)
        #expect(headers(installation)["x-parse-client-key"] == "[redacted: Parse client key]")
        let push = request(on("backend→parse").first)
        #expect(headers(push)["x-parse-master-key"] == "[redacted: Parse master key]")
        #expect(((push["postData"] as? [String: Any])?["text"] as? String)?.contains("content-available") == true)

        // Parse → FakeAPNs over HTTP/2: the stream, the provider token withheld, APNs's answer.
        let provider = try #require(on("provider→apns").first)
        #expect(request(provider)["httpVersion"] as? String == "HTTP/2")
        #expect((provider["_h2"] as? [String: Any])?["streamId"] as? Int == 1)
        #expect(headers(request(provider))["authorization"] == "[redacted: authorization]")
        #expect(headers(request(provider))["apns-push-type"] == "background")
        #expect((provider["response"] as? [String: Any])?["status"] as? Int == 200)
        let delivery = request(on("apns→device").first)
        #expect(headers(delivery)["apns-topic"] == "com.razeware.NASA-TV")
        #expect(((delivery["postData"] as? [String: Any])?["text"] as? String)?.contains("content-available") == true)

        let transcript = try String(
            contentsOf: cassette.appendingPathComponent("transcripts/com.razeware.NASA-TV.jsonl"), encoding: .utf8)
        let lines = try transcript.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(lines.first?["from"] as? String == "app")
        #expect((lines.first?["line"] as? String)?.contains("\"method\":\"hello\"") == true)
        #expect(
            lines.contains {
                $0["from"] as? String == "device"
                    && ($0["line"] as? String)?.contains("didReceiveRemoteNotification") == true
            })
        let times = lines.compactMap { $0["at"] as? Double }
        #expect(times.count == lines.count && times == times.sorted())
    }

    /// Replayed, push steps send what the recording sent, not what the scenario file says now: a file
    /// changed to send an alert push instead still replays the silent push, equivalent to the recording.
    @Test func aReplaySendsTheRecordedPushesNotTheScenarioFilesOwn() async throws {
        func configuration(push data: String, _ name: String) throws -> URL {
            try ScenarioFixtures.writeConfiguration(
                ScenarioFixtures.header(media: "throttle: 2MB/s", device: "")
                    + """
                    scenarios:
                      pushed:
                        steps:
                    \(ScenarioFixtures.silentPushSteps(indent: 6).replacingOccurrences(of: "data: {content-available: 1, push_type: background, priority: 5}", with: "data: \(data)"))
                        expect:
                          within: 60s
                          chain: [device.push.delivered, transfer.completed, app.fetchCompleted]
                    """, name)
        }
        let silent = try configuration(
            push: "{content-available: 1, push_type: background, priority: 5}", "silent")
        let folder = silent.deletingLastPathComponent()
        let cassette = folder.appendingPathComponent("cassette")
        let recording = try await HarnessCommand.run([
            "run", "pushed", "--config", silent.path, "--record", cassette.path, "--report-dir",
            folder.appendingPathComponent("recorded").path,
        ])
        #expect(recording.status == 0, "\(recording.transcript)")

        let alert = try configuration(push: "{alert: Changed since the recording}", "alert")
        let reports = folder.appendingPathComponent("replay")
        let replay = try await HarnessCommand.run(
            ["replay", cassette.path, "--config", alert.path, "--report-dir", reports.path] + Self.tolerance)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(replay.standardOutput.contains("has changed since the recording"), "\(replay.transcript)")
        let events = try Self.events(reports.appendingPathComponent("timeline.jsonl"))
        #expect(Self.attributes(events, "apns.request.accepted").map { $0["pushType"] } == ["background"])
    }

    /// A scenario file with the reference app and a build of it with a bug, and a media fault rule
    /// that fires with a probability and no seed, serving a copy of the catalogue's media at `media`
    /// (which a test can delete, so that only a cassette can answer).
    func randomFaultConfiguration(media: URL) throws -> URL {
        try FileManager.default.copyItem(atPath: ScenarioFixtures.media, toPath: media.path)
        let text =
            ScenarioFixtures.header(
                media:
                    "throttle: 400KB/s, faults: [{fault: reset, path: /photos/*, afterFraction: 0.37, probability: 0.9, count: 1}]",
                device: "backgroundPushBudget: 5s") + ScenarioFixtures.buggyApp
                + """
                scenarios:
                  random-fault:
                    steps:
                \(ScenarioFixtures.silentPushSteps(indent: 6))
                    expect:
                      within: 60s
                      chain: [device.push.delivered, transfer.completed, app.fetchCompleted]
                """
        return try ScenarioFixtures.writeConfiguration(
            text.replacingOccurrences(of: "root: \(ScenarioFixtures.media)", with: "root: \(media.path)"))
    }

    @Test func aRandomFaultReplaysAtTheSameByteAndABuggyAppIsCaughtAtItsFirstDivergence() async throws {
        let media = try PackagePaths.temporaryDirectory().appendingPathComponent("media")
        let file = try randomFaultConfiguration(media: media)
        let folder = file.deletingLastPathComponent()
        // The rule fires with probability 0.9: record until a recording holds the fault (each try draws
        // a new seed), at most ten times.
        var cassette: URL?
        var recordedFaults: [[String: String]] = []
        for attempt in 1...10 where cassette == nil {
            let candidate = folder.appendingPathComponent("cassette\(attempt)")
            let recording = try await HarnessCommand.run([
                "run", "random-fault", "--config", file.path, "--record", candidate.path, "--report-dir",
                folder.appendingPathComponent("recorded\(attempt)").path,
            ])
            #expect(recording.status == 0, "\(recording.transcript)")
            let events = try Self.events(candidate.appendingPathComponent("timeline.jsonl"))
            recordedFaults = Self.attributes(events, "media.fault.fired")
            if !recordedFaults.isEmpty { cassette = candidate }
        }
        let recorded = try #require(cassette, "the fault never fired in ten recordings")
        let meta = try String(contentsOf: recorded.appendingPathComponent("meta.json"), encoding: .utf8)
        #expect(meta.contains("\"media.faults[1]\""), "the drawn seed is kept: \(meta)")
        #expect(recordedFaults.map { $0["how"] } == ["RST"])
        // From here on only the cassette can answer: a replay that served the folder would find nothing.
        try FileManager.default.removeItem(at: media)

        for round in 1...3 {
            let reports = folder.appendingPathComponent("replay\(round)")
            let replay = try await HarnessCommand.run(
                ["replay", recorded.path, "--config", file.path, "--report-dir", reports.path] + Self.tolerance)
            #expect(replay.status == 0, "round \(round): \(replay.transcript)")
            let events = try Self.events(reports.appendingPathComponent("timeline.jsonl"))
            #expect(Self.attributes(events, "media.fault.fired") == recordedFaults, "round \(round)")
        }

        let buggy = folder.appendingPathComponent("buggy")
        let replay = try await HarnessCommand.run(
            ["replay", recorded.path, "--config", file.path, "--app", "nasa-tv=buggy", "--report-dir", buggy.path]
                + Self.tolerance)
        #expect(replay.status == 1, "\(replay.transcript)")
        #expect(
            replay.standardOutput.contains("replay: the first divergence from the recording:"), "\(replay.transcript)")
        let junit = try String(contentsOf: buggy.appendingPathComponent("junit.xml"), encoding: .utf8)
        #expect(junit.contains("the replay left the recording"))
        let page = try String(contentsOf: buggy.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(page.contains("<table class=\"replay side-by-side\">"))
    }

    @Test func ctrlCLeavesACassetteWholeUpToTheInterruptionThatSaysSo() async throws {
        let file = try ScenarioFixtures.writeConfiguration(
            ScenarioFixtures.header(media: "throttle: 20KB/s", device: "")
                + """
                scenarios:
                  slow:
                    steps:
                \(ScenarioFixtures.silentPushSteps(indent: 6))
                    expect:
                      chain: [transfer.completed]
                """)
        let folder = file.deletingLastPathComponent()
        let cassette = folder.appendingPathComponent("cassette")
        let run = try RunningChild(
            HarnessCommand.path,
            [
                "run", "slow", "--config", file.path, "--record", cassette.path, "--report-dir",
                folder.appendingPathComponent("report").path,
            ])
        _ = try #require(await run.waitForLine(containing: "transfer.progress"), "\(run.output)")
        run.send(SIGINT)
        #expect(await run.waitForExit() == 130, "\(run.output)")
        #expect(run.output.contains("cassette: \(cassette.path) (interrupted)"), "\(run.output)")

        let meta = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("meta.json")))
                as? [String: Any])
        #expect(meta["complete"] as? Bool == false)
        #expect(meta["outcome"] as? String == "INTERRUPTED")
        let names = try FileManager.default.contentsOfDirectory(atPath: cassette.path).sorted()
        #expect(names == ["bodies", "harness.yml", "meta.json", "timeline.jsonl", "traffic.har", "transcripts"])
        // The transfer the interruption cut is in the HAR as far as it went.
        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let transfer = entries.first { $0["_link"] as? String == "device→media" }
        let fault = try #require(transfer?["_fault"] as? [String: Any])
        #expect(fault["kind"] as? String == "connectionClosed")
        let sent = try #require((transfer?["response"] as? [String: Any])?["bodySize"] as? Int)
        #expect(sent > 0 && sent < 437_316)
    }

    /// A cassette the harness cannot use: exit 2, naming the file and where in it.
    @Test func aBadCassetteExitsTwoNamingTheFileAndTheJSONPath() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let cassette = folder.appendingPathComponent("cassette")
        try FileManager.default.createDirectory(
            at: cassette.appendingPathComponent("bodies"), withIntermediateDirectories: true)
        let digest = String(repeating: "ab", count: 32)
        let meta =
            #"{"format": "pushharness-cassette", "version": 1, "scenario": "silent-push-photo", "seeds": {}, "recordedAt": "x", "complete": true, "entries": 1}"#
        let har = """
            {"log": {"version": "1.2", "creator": {"name": "PushHarness", "version": "1"}, "entries": [{
              "startedDateTime": "2026-11-24T08:00:00.000Z", "time": 0,
              "request": {"method": "GET", "url": "http://127.0.0.1:44447/p.jpg", "httpVersion": "HTTP/1.1",
                "cookies": [], "headers": [], "queryString": [], "headersSize": -1, "bodySize": 0},
              "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
                "content": {"size": 100000, "mimeType": "image/jpeg", "_file": "bodies/\(digest)"},
                "redirectURL": "", "headersSize": -1, "bodySize": 100000},
              "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}}]}}
            """
        func write(meta: String, har: String) throws {
            try meta.write(to: cassette.appendingPathComponent("meta.json"), atomically: true, encoding: .utf8)
            try har.write(to: cassette.appendingPathComponent("traffic.har"), atomically: true, encoding: .utf8)
        }
        let cases: [(meta: String, har: String, words: [String])] = [
            (meta, har, ["traffic.har at $.log.entries[0].response.content._file", "is missing"]),
            (meta, String(har.prefix(200)), ["traffic.har at $:", "truncated or corrupt"]),
            (
                meta.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 9"), har,
                ["meta.json at $.version", "newer"]
            ),
            (
                meta, har.replacingOccurrences(of: "\"status\": 200", with: "\"status\": \"ok\""),
                ["traffic.har at $.log.entries[0].response.status", "expected a number"]
            ),
        ]
        for (meta, har, words) in cases {
            try write(meta: meta, har: har)
            let result = try await HarnessCommand.run(["replay", cassette.path])
            #expect(result.status == 2, "\(result.transcript)")
            for word in words { #expect(result.standardError.contains(word), "\(word): \(result.transcript)") }
        }
        // Recording into a folder that holds something else is refused, and the file is kept.
        try Data("keep".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let refused = try await HarnessCommand.run([
            "run", "silent-push-photo", "--ephemeral-ports", "--skip-build", "--record", folder.path, "--report-dir",
            folder.appendingPathComponent("report").path,
        ])
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(refused.standardError.contains("not a cassette"), "\(refused.transcript)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("notes.txt").path))
    }

    @Test func diffNamesTheFirstDivergenceOfTwoTimelines() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        func line(_ sequence: Int, _ elapsed: Double, _ kind: String, _ attributes: String) -> String {
            #"{"attributes":\#(attributes),"date":"2026-11-24T08:00:00Z","elapsed":\#(elapsed),"kind":"\#(kind)","sequence":\#(sequence),"source":"media"}"#
        }
        let first = [
            line(1, 0, "harness.step.started", #"{"step":"launch nasa-tv"}"#),
            line(2, 1, "media.fault.fired", #"{"atByte":"65536","how":"RST"}"#),
        ].joined(separator: "\n")
        let second = first.replacingOccurrences(of: "65536", with: "70000")
        try first.write(to: folder.appendingPathComponent("a.jsonl"), atomically: true, encoding: .utf8)
        try second.write(to: folder.appendingPathComponent("b.jsonl"), atomically: true, encoding: .utf8)
        let same = try await HarnessCommand.run(
            ["diff", folder.appendingPathComponent("a.jsonl").path, folder.appendingPathComponent("a.jsonl").path])
        #expect(same.status == 0, "\(same.transcript)")
        let different = try await HarnessCommand.run(
            ["diff", folder.appendingPathComponent("a.jsonl").path, folder.appendingPathComponent("b.jsonl").path])
        #expect(different.status == 1, "\(different.transcript)")
        #expect(different.standardOutput.contains("media.fault.fired: expected {atByte: 65536}, got {atByte: 70000}"))
        let missing = try await HarnessCommand.run(["diff", folder.path, folder.appendingPathComponent("a.jsonl").path])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("timeline.jsonl"), "\(missing.transcript)")
    }
}

enum ScenarioDigest {
    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
}
