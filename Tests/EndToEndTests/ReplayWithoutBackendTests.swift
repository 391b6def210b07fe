import Foundation
import TestSupport
import Testing

/// Issue 32: `harness replay DIR --without-backend NAME` reproduces a run without the backend's code.
/// Each recording here runs the backend from a copy in a temporary folder, which is deleted before the
/// replay: the replay cannot start it, and must not need to.
@Suite struct ReplayWithoutBackendTests {
    static func lines(_ file: URL) throws -> [[String: Any]] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Replays `cassette` without `backend` (its reports in `folder`/replay); the command and its reports.
    static func replay(_ cassette: URL, without backend: String, in folder: URL) async throws -> (ChildProcess, URL) {
        let reports = folder.appendingPathComponent("replay")
        let replay = try await HarnessCommand.run(
            [
                "replay", cassette.path, "--without-backend", backend, "--skip-build", "--tolerance", "10",
                "--report-dir", reports.path,
            ], in: folder)
        return (replay, reports)
    }

    /// Records `scenario` of the file `config` into `folder`/cassette, running the backend as it says.
    static func record(_ scenario: String, config: URL, in folder: URL) async throws -> (ChildProcess, URL) {
        let cassette = folder.appendingPathComponent("cassette")
        let recording = try await HarnessCommand.run(
            [
                "run", scenario, "--config", config.path, "--ephemeral-ports", "--skip-build", "--record",
                cassette.path, "--report-dir", folder.appendingPathComponent("recorded").path,
            ], in: folder)
        return (recording, cassette)
    }

    /// The kinds of a report folder's timeline, with their attributes.
    static func events(in reports: URL) throws -> [(kind: String, attributes: [String: String])] {
        try lines(reports.appendingPathComponent("timeline.jsonl")).map {
            (($0["kind"] as? String) ?? "", ($0["attributes"] as? [String: String]) ?? [:])
        }
    }

    /// PushChat's exchange recorded with its server copied away from the project, then replayed with
    /// that copy gone: equivalent, the server's notifications sent again to this run's tokens; and the
    /// same replay of a changed scenario (Alice's phone left on screen) parts from the recording.
    @Test func pushChatReplaysWithoutItsServer() async throws {
        let folder = try PackagePaths.temporaryDirectory("without-backend-pushchat")
        let server = folder.appendingPathComponent("pushchat_server.py")
        try FileManager.default.copyItem(
            at: PackagePaths.root.appendingPathComponent("Fixtures/backends/pushchat_server.py"), to: server)
        let original = try String(contentsOf: PackagePaths.root.appendingPathComponent("harness.yml"), encoding: .utf8)
        let command = "command: [python3, Fixtures/backends/pushchat_server.py]"
        #expect(original.components(separatedBy: command).count == 2, "harness.yml has the server's command once")
        // In the test's own folder, the app's path made whole.
        let app = "command: [python3, Fixtures/apps/pushchat.py]"
        #expect(original.components(separatedBy: app).count == 2, "harness.yml has the app's command once")
        let media = "    root: Fixtures/media\n"
        #expect(original.components(separatedBy: media).count == 2, "harness.yml has the media root once")
        let text = original.replacingOccurrences(of: command, with: "command: [python3, \(server.path)]")
            .replacingOccurrences(of: media, with: "    root: \(PackagePaths.root.path)/Fixtures/media\n")
            .replacingOccurrences(
                of: app,
                with:
                    "command: [python3, \(PackagePaths.root.appendingPathComponent("Fixtures/apps/pushchat.py").path)]")
        let file = folder.appendingPathComponent("harness.yml")
        try text.write(to: file, atomically: true, encoding: .utf8)

        let (recording, cassette) = try await Self.record("pushchat-exchange", config: file, in: folder)
        #expect(recording.status == 0, "\(recording.transcript)")
        // The apps' exchanges with the server are in the traffic, each with its form.
        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        let asked = entries.filter { $0["_link"] as? String == "app→backend" }
        let forms = asked.compactMap {
            (($0["request"] as? [String: Any])?["postData"] as? [String: Any])?["text"] as? String
        }
        #expect(asked.count == 4, "\(asked)")
        #expect(asked.allSatisfy { $0["_service"] as? String == "backend:pushchat" }, "\(asked)")
        #expect(forms.filter { $0.hasPrefix("cmd=join&") }.count == 2, "\(forms)")
        #expect(forms.filter { $0.hasPrefix("cmd=message&") }.count == 2, "\(forms)")

        try FileManager.default.removeItem(at: server)
        let (replay, reports) = try await Self.replay(cassette, without: "pushchat", in: folder)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(
            replay.standardOutput.contains(
                "replay: equivalent to the recording (the scenario ended PASS, as recorded)"),
            "\(replay.transcript)")
        #expect(
            replay.standardOutput.contains("stands in for backend pushchat: it is not started"), "\(replay.transcript)")
        #expect(
            !replay.standardOutput.contains("runs, as the cassette's harness.yml says: backend"), "\(replay.transcript)"
        )
        let events = try Self.events(in: reports)
        #expect(!events.contains { $0.kind == "backend.started" }, "the server was started")
        #expect(
            events.contains {
                $0.kind == "backend.ready" && $0.attributes["how"] == "a stand-in answering from the cassette"
            })
        // What the server sent through the legacy gateway came again, to this run's tokens.
        let shown = events.filter { $0.kind == "device.notification.shown" }.map {
            "\($0.attributes["device"] ?? "")|\($0.attributes["body"] ?? "")"
        }
        #expect(shown == ["bob|Alice: Hello from Alice", "alice|SteveJ: Hi Alice"], "\(shown)")

        // Alice's phone stays on screen: SteveJ's message is not shown as a notification there.
        let block = try #require(text.range(of: "\n  pushchat-exchange:\n"))
        let end = try #require(text.range(of: "\n  pushchat-leave:\n", range: block.upperBound..<text.endIndex))
        var changed = String(text[block.lowerBound..<end.lowerBound])
        for (old, new) in [("      - alice.home: pushchat\n", ""), ("within: 30s", "within: 5s")] {
            #expect(changed.components(separatedBy: old).count == 2, "'\(old)' is in the scenario once")
            changed = changed.replacingOccurrences(of: old, with: new)
        }
        let other = folder.appendingPathComponent("changed.yml")
        try text.replacingCharacters(in: block.lowerBound..<end.lowerBound, with: changed)
            .write(to: other, atomically: true, encoding: .utf8)
        let parted = try await HarnessCommand.run(
            [
                "replay", cassette.path, "--without-backend", "pushchat", "--config", other.path, "--skip-build",
                "--report-dir", folder.appendingPathComponent("changed").path,
            ], in: folder)
        #expect(parted.status == 1, "\(parted.transcript)")
        #expect(parted.standardOutput.contains("the first divergence from the recording"), "\(parted.transcript)")
    }

    /// A backend that notifies an app through APNs's HTTP/2 API (curl, a push certificate) and through
    /// Parse's push API: both are sent again by the stand-in, to this run's device token.
    @Test func aBackendsHTTP2AndParsePushesAreSentAgain() async throws {
        let folder = try PackagePaths.temporaryDirectory("without-backend-notifier")
        let fixtures = PackagePaths.root.appendingPathComponent("Tests/BackendFixtures")
        let backend = folder.appendingPathComponent("notifier_backend.py")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("notifier_backend.py"), to: backend)
        let file = try ScenarioFixtures.writeConfiguration(
            """
            version: 1
            services:
              apns: {port: 0}
              media: {port: 0, root: \(ScenarioFixtures.media)}
              parse: {port: 0}
            apps:
              notified:
                bundleId: com.example.notified
                command: [python3, \(fixtures.appendingPathComponent("notified_app.py").path)]
                backgroundModes: [remote-notification]
            backends:
              notifier:
                command: [python3, \(backend.path)]
                port: free
                ready: {http: /health}
                readyTimeout: 60s
            scenarios:
              notify:
                backends: [notifier]
                steps:
                  - launch: notified
                expect:
                  within: 30s
                  eventually:
                    - app.log: {message: "received: hello (HTTP/2)"}
                    - app.log: {message: "received: hello (Parse)"}
                  chain:
                    - backend.ready: {backend: notifier}
                    - app.log: {message: the backend answered 200 queued}
                  settle: 1s
            """)
        let (recording, cassette) = try await Self.record("notify", config: file, in: folder)
        #expect(recording.status == 0, "\(recording.transcript)")
        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        func agent(_ entry: [String: Any]) -> String {
            let headers = ((entry["request"] as? [String: Any])?["headers"] as? [[String: String]]) ?? []
            return headers.first { $0["name"]?.lowercased() == "user-agent" }?["value"] ?? ""
        }
        // Parse's own request to APNs says it is Parse's: it is not the backend's to send again.
        let providers = entries.filter { $0["_link"] as? String == "provider→apns" }
        #expect(providers.map(agent).filter { $0.hasPrefix("curl/") }.count == 1, "\(providers)")
        #expect(providers.map(agent).filter { $0 == "PushHarness FakeParse" }.count == 1, "\(providers)")

        try FileManager.default.removeItem(at: backend)
        let (replay, reports) = try await Self.replay(cassette, without: "notifier", in: folder)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(replay.standardOutput.contains("replay: equivalent to the recording"), "\(replay.transcript)")
        #expect(replay.standardOutput.contains("again to APNs, which answered 200"), "\(replay.transcript)")
        #expect(replay.standardOutput.contains("again through Parse"), "\(replay.transcript)")
        let logs = try Self.events(in: reports).filter { $0.kind == "app.log" }.compactMap {
            $0.attributes["message"]
        }
        #expect(logs.contains("received: hello (HTTP/2)"), "\(logs)")
        #expect(logs.contains("received: hello (Parse)"), "\(logs)")

        // A backend the scenario does not have, and a cassette without the apps' exchanges, are refused.
        let unknown = try await HarnessCommand.run(
            ["replay", cassette.path, "--without-backend", "pushchat", "--skip-build"], in: folder)
        #expect(unknown.status == 2, "\(unknown.transcript)")
        #expect(
            unknown.standardError.contains("scenario 'notify' has no backend 'pushchat' (its backends: notifier)"),
            "\(unknown.transcript)")
        var stripped = har
        var log = stripped["log"] as? [String: Any] ?? [:]
        log["entries"] = entries.filter { $0["_link"] as? String != "app→backend" }
        stripped["log"] = log
        try JSONSerialization.data(withJSONObject: stripped).write(to: cassette.appendingPathComponent("traffic.har"))
        let older = try await HarnessCommand.run(
            ["replay", cassette.path, "--without-backend", "notifier", "--skip-build"], in: folder)
        #expect(older.status == 2, "\(older.transcript)")
        #expect(
            older.standardError.contains("holds no exchange of the apps with backend notifier"), "\(older.transcript)")
    }
}
