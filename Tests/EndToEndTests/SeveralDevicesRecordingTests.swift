import Foundation
import TestSupport
import Testing

/// Issue 32: a scenario with several devices was refused by `--record`. Now each app's transcript is
/// kept per device, APNs's events name the device, and PushChat's exchange (two phones, the tutorial's
/// server) and the twenty-device fan-out each replay equivalent to their recording.
@Suite struct SeveralDevicesRecordingTests {
    static func lines(_ file: URL) throws -> [[String: Any]] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test(arguments: ["pushchat-exchange", "parse-push-fan-out-20"])
    func aScenarioWithSeveralDevicesIsRecordedAndReplaysEquivalent(_ scenario: String) async throws {
        let folder = try PackagePaths.temporaryDirectory(scenario)
        let cassette = folder.appendingPathComponent("cassette")
        let (recording, _) = try await HarnessCommand.runCatalogueScenario(scenario, ["--record", cassette.path])
        #expect(recording.status == 0, "\(recording.transcript)")

        let transcripts = try FileManager.default.contentsOfDirectory(
            atPath: cassette.appendingPathComponent("transcripts").path
        ).sorted()
        let events = try Self.lines(cassette.appendingPathComponent("timeline.jsonl"))
        let delivered = events.filter { $0["kind"] as? String == "apns.delivered" }
        let devices = Set(delivered.compactMap { ($0["attributes"] as? [String: String])?["device"] })
        if scenario == "pushchat-exchange" {
            #expect(transcripts == ["com.hollance.PushChat@alice.jsonl", "com.hollance.PushChat@bob.jsonl"])
            #expect(devices == ["alice", "bob"], "\(delivered)")
            // What the backend sent through Apple's legacy gateway is in the traffic: each notification as
            // the HTTP/2 request it stands for, with its identifier, and the gateway's answer.
            let har = try #require(
                JSONSerialization.jsonObject(with: Data(contentsOf: cassette.appendingPathComponent("traffic.har")))
                    as? [String: Any])
            let entries = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
            let legacy = entries.filter {
                (($0["request"] as? [String: Any])?["url"] as? String)?.hasPrefix("apns-legacy://") == true
            }
            let bodies = legacy.compactMap {
                (($0["request"] as? [String: Any])?["postData"] as? [String: Any])?["text"] as? String
            }
            #expect(bodies.contains { $0.contains("Alice: Hello from Alice") }, "\(legacy)")
            #expect(bodies.contains { $0.contains("SteveJ: Hi Alice") }, "\(legacy)")
            #expect(legacy.allSatisfy { $0["_link"] as? String == "provider→apns" }, "\(legacy)")
            #expect(legacy.allSatisfy { ($0["response"] as? [String: Any])?["status"] as? Int == 200 }, "\(legacy)")
        } else {
            #expect(transcripts.count == 20 && transcripts.allSatisfy { $0.contains("@device") }, "\(transcripts)")
            #expect(devices.count == 20, "\(delivered)")
        }

        let replay = try await HarnessCommand.run(
            [
                // The suite holds the package's build lock: an app's build command would wait for it.
                "replay", cassette.path, "--skip-build", "--tolerance", "10", "--report-dir",
                folder.appendingPathComponent("replay").path,
            ], in: folder)
        #expect(replay.status == 0, "\(replay.transcript)")
        #expect(replay.standardOutput.contains("replay: equivalent to the recording"), "\(replay.transcript)")
    }
}
