import Foundation
import TestSupport
import Testing

/// `harness serve --record` with a backend under test driving the fakes (curl playing the device's
/// registration, the app and the backend): every link it used is in the cassette with no key in it;
/// then `harness serve --replay --replay-pushes` sends the backend's push again with no backend running.
@Suite struct ServedCassetteTests {
    static let alert = "Sent by the backend under test"

    /// curl as a client of the served Parse: `POST path` with `body` and the headers given.
    static func post(_ served: ServedHarness, _ path: String, _ body: String, _ headers: [String]) async throws
        -> ChildProcess
    {
        try await ChildProcess.run(
            "curl",
            ["--silent", "--show-error", "--max-time", "30", "-X", "POST", "--data", body]
                + (["Content-Type: application/json"] + headers).flatMap { ["-H", $0] }
                + [served.url("parse") + path])
    }

    /// A device registered with FakeAPNs through its control API; its token.
    static func registerDevice(_ served: ServedHarness) async throws -> String {
        let registered = try await CurlExchange.run([
            "-X", "POST", "-d", "{\"topic\":\"com.razeware.NASA-TV\",\"environment\":\"sandbox\"}",
            served.url("apns", "controlURL") + "/devices",
        ])
        #expect(registered.status == 201, "\(registered)")
        let device = try JSONSerialization.jsonObject(with: Data(registered.body.utf8)) as? [String: Any]
        return try #require(device?["deviceToken"] as? String, "\(registered)")
    }

    /// The `_PushStatus` rows of a served Parse whose payload holds the test's alert.
    static func pushStatuses(_ served: ServedHarness) async throws -> Int {
        let answer = try await CurlExchange.run([
            "-H", "X-Parse-Application-Id: \(served.url("parse", "applicationId"))", "-H",
            "X-Parse-Master-Key: \(served.url("parse", "masterKey"))", served.url("parse") + "/classes/_PushStatus",
        ])
        #expect(answer.status == 200, "\(answer)")
        let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        let rows = object?["results"] as? [[String: Any]] ?? []
        return rows.filter { "\($0["payload"] ?? "")".contains(alert) }.count
    }

    @Test func aServedBackendsTrafficIsRecordedAndItsPushesReplayedWithoutIt() async throws {
        let cassette = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let recording = try await ServedHarness("serve-record", arguments: ["--record", cassette.path])
        let masterKey = recording.url("parse", "masterKey")
        let clientKey = recording.url("parse", "clientKey")
        #expect(!masterKey.isEmpty && !clientKey.isEmpty, "the endpoints file names Parse's keys")
        let token = try await Self.registerDevice(recording)
        let applicationId = "X-Parse-Application-Id: \(recording.url("parse", "applicationId"))"
        let saved = try await Self.post(
            recording, "/installations", "{\"deviceType\":\"ios\",\"deviceToken\":\"\(token)\"}",
            [applicationId, "X-Parse-Client-Key: \(clientKey)"])
        #expect(saved.status == 0 && saved.standardOutput.contains("objectId"), "\(saved.transcript)")
        let pushed = try await Self.post(
            recording, "/push", "{\"where\":{\"deviceType\":\"ios\"},\"data\":{\"alert\":\"\(Self.alert)\"}}",
            [applicationId, "X-Parse-Master-Key: \(masterKey)"])
        #expect(pushed.status == 0 && pushed.standardOutput.contains("\"result\":true"), "\(pushed.transcript)")
        // Stopping lets Parse finish the push in flight before FakeAPNs stops (the stack's shutdown
        // order), so the cassette holds Parse's request to FakeAPNs without waiting for it here.
        #expect(await recording.stop() == 0)
        #expect(recording.process.output.contains("cassette: \(cassette.path)"), "\(recording.process.output)")

        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let links = Set(entries.compactMap { $0["_link"] as? String })
        #expect(links.isSuperset(of: ["app→parse", "backend→parse", "provider→apns"]), "\(links)")
        for (path, data) in RecordReplayTests.files(in: cassette) {
            for secret in [masterKey, clientKey] {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(path) holds the secret \(secret)")
            }
        }

        // No backend now. The replay starts from the recording's state, so Parse still has the
        // installation: the recorded push goes from Parse to FakeAPNs for the recorded token (a device
        // the new FakeAPNs does not know, which it says), with the recorded payload.
        let replaying = try await ServedHarness(
            "serve-replay", arguments: ["--replay", cassette.path, "--replay-pushes"],
            stateDirectory: recording.stateDirectory)
        // Said once the services are up, by the task that replays them: waited for, not read at once.
        let replayingLine = await replaying.process.waitForLine(containing: "replaying 1 recorded push")
        #expect(replayingLine != nil, "\(replaying.process.output)")
        let line = await replaying.process.waitForLine(containing: "replayed push 1 of 1 (recorded at")
        #expect(line != nil, "\(replaying.process.output)")
        #expect(await replaying.stop() == 0)
        // Parse finished that push before stopping and saved its `_PushStatus` in the shared state:
        // the recorded session's row and now the replay's, both with the recorded payload.
        let after = try await ServedHarness("serve-after", stateDirectory: recording.stateDirectory)
        #expect(try await Self.pushStatuses(after) == 2)
        #expect(await after.stop() == 0)
    }

    @Test(arguments: [
        ["--replay-pushes"], ["--replay-pushes", "--record", "/tmp/never-made"],
        ["--replay-pushes", "--cassette", "/tmp/never-made", "--record-mode", "new_episodes"],
    ])
    func replayingPushesWithoutReplayingOrWhileRecordingIsRefused(_ arguments: [String]) async throws {
        let refused = try await HarnessCommand.run(["serve", "--ephemeral-ports"] + arguments)
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(refused.standardError.contains("--replay-pushes replays a cassette without recording"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-made"))
    }
}
