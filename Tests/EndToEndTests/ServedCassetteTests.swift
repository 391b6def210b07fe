import Foundation
import TestSupport
import Testing

/// `harness serve --record` with a backend under test driving the fakes (curl playing the app and the
/// backend): every link it used is in the cassette with no key in it; then `harness serve --replay
/// --replay-pushes` sends the backend's push again with no backend running.
@Suite struct ServedCassetteTests {
    static let token = String(repeating: "ab", count: 32)

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

    static func saveInstallation(_ served: ServedHarness) async throws {
        let saved = try await post(
            served, "/installations",
            "{\"deviceType\":\"ios\",\"deviceToken\":\"\(token)\",\"appIdentifier\":\"com.razeware.NASA-TV\"}",
            [
                "X-Parse-Application-Id: \(served.url("parse", "applicationId"))",
                "X-Parse-Client-Key: \(served.url("parse", "clientKey"))",
            ])
        #expect(saved.status == 0 && saved.standardOutput.contains("objectId"), "\(saved.transcript)")
    }

    @Test func aServedBackendsTrafficIsRecordedAndItsPushesReplayedWithoutIt() async throws {
        let cassette = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let recording = try await ServedHarness("serve-record", arguments: ["--record", cassette.path])
        let masterKey = recording.url("parse", "masterKey")
        #expect(!masterKey.isEmpty, "the endpoints file names Parse's master key")
        try await Self.saveInstallation(recording)
        let pushed = try await Self.post(
            recording, "/push",
            "{\"where\":{\"deviceType\":\"ios\"},\"data\":{\"alert\":\"Sent by the backend under test\"}}",
            ["X-Parse-Application-Id: \(recording.url("parse", "applicationId"))", "X-Parse-Master-Key: \(masterKey)"])
        #expect(pushed.status == 0 && pushed.standardOutput.contains("\"result\":true"), "\(pushed.transcript)")
        #expect(await recording.stop() == 0)
        #expect(recording.process.output.contains("cassette: \(cassette.path)"), "\(recording.process.output)")

        let har = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let links = Set(entries.compactMap { $0["_link"] as? String })
        #expect(links.isSuperset(of: ["app→parse", "backend→parse", "provider→apns"]), "\(links)")
        for (path, data) in RecordReplayTests.files(in: cassette) {
            for secret in [masterKey, recording.url("parse", "clientKey")] where !secret.isEmpty {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(path) holds the secret \(secret)")
            }
        }

        // No backend now: the served harness sends the recorded push to its own Parse.
        let replaying = try await ServedHarness(
            "serve-replay", arguments: ["--replay", cassette.path, "--replay-pushes"])
        try await Self.saveInstallation(replaying)
        let line = await replaying.process.waitForLine(containing: "replayed push 1 of 1")
        #expect(line != nil, "\(replaying.process.output)")
        let statuses = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--max-time", "30", "-H",
                "X-Parse-Application-Id: \(replaying.url("parse", "applicationId"))",
                "-H", "X-Parse-Master-Key: \(replaying.url("parse", "masterKey"))",
                replaying.url("parse") + "/classes/_PushStatus",
            ])
        #expect(statuses.standardOutput.contains("Sent by the backend under test"), "\(statuses.transcript)")
        #expect(await replaying.stop() == 0)
    }

    @Test func replayingPushesWithoutACassetteIsRefused() async throws {
        let refused = try await HarnessCommand.run(["serve", "--ephemeral-ports", "--replay-pushes"])
        #expect(refused.status == 2, "\(refused.transcript)")
        #expect(refused.standardError.contains("--replay-pushes needs a cassette to replay"), "\(refused.transcript)")
    }
}
