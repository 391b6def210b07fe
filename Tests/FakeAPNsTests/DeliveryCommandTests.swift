import Foundation
import HarnessTimeline
import TestSupport
import Testing

@testable import FakeAPNs

/// `deliveryCommand`: a device registered through the control API (not a simulated one) gets each
/// delivered notification as the file `xcrun simctl push` reads, handed to a command. Here the command
/// is a stand-in that keeps what it was given; on a Mac it would be `xcrun simctl push booted {topic}
/// {file}` (docs/real-devices.md).
struct DeliveryCommandTests {
    @Test func aDeliveredNotificationIsWrittenAsASimctlFileAndHandedToTheCommand() async throws {
        let folder = try PackagePaths.temporaryDirectory("delivery-command")
        let kept = folder.appendingPathComponent("kept.apns")
        var configuration = FakeAPNsConfiguration(credentialsDirectory: folder.appendingPathComponent("credentials"))
        configuration.port = 0
        configuration.controlPort = 0
        configuration.deliveryCommand = [
            "sh", "-c", "cp \"$0\" \"$3\" && echo \"pushed $1 to $2\"", "{file}", "{topic}", "{token}", kept.path,
        ]
        let timeline = Timeline()
        let apns = try await FakeAPNsServer.start(configuration: configuration, timeline: timeline)
        let ran = Task {
            try await timeline.waitFor("the delivery command", timeout: .seconds(60)) {
                $0.kind == .apnsDeliveryCommand
            }
        }
        let registered = try await CurlExchange.json(
            "POST", apns.controlURL + "/devices", #"{"topic": "com.example.app"}"#)
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(registered.body.utf8)) as? [String: Any])?["deviceToken"]
                as? String, "\(registered)")
        let status = try await apns.curlPush(to: token, body: #"{"aps":{"alert":"Hello"},"n":1}"#)
        let event = try await ran.value
        await apns.close()
        #expect(status == "200")
        #expect(event["status"] == "exited with status 0", "\(event)")
        #expect(event["output"] == "pushed com.example.app to \(token)\n", "\(event)")
        let file = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: kept)) as? [String: Any])
        #expect(file["Simulator Target Bundle"] as? String == "com.example.app")
        #expect((file["aps"] as? [String: Any])?["alert"] as? String == "Hello")
        #expect(file["n"] as? Int == 1)
    }

    /// A command that outlives its time is killed with all it started; one that cannot start says why.
    @Test func aCommandPastItsTimeIsKilledWithItsChildrenAndAMissingOneIsSaid() throws {
        let slow = try CommandRun.execute(
            ["sh", "-c", "sleep 30 & echo started; wait"], timeout: .milliseconds(300), keep: 100
        ) { _ in }
        #expect(slow.0 == "killed after 0.3 seconds", "\(slow)")
        #expect(slow.1 == "started\n")
        let long = try CommandRun.execute(["sh", "-c", "yes | head -c 100000"], timeout: .seconds(30), keep: 10) { _ in
        }
        #expect(long.0 == "exited with status 0" && long.1 == "y\ny\ny\ny\ny\n")
        #expect(throws: CommandRun.Failure.self) {
            try CommandRun.execute(["no-such-program-here"], timeout: .seconds(5), keep: 10) { _ in }
        }
    }

    @Test func theFileAndTheArgumentsAreMadeByRule() throws {
        #expect(
            SimulatorPushFile.arguments(
                ["xcrun", "simctl", "push", "booted", "{topic}", "{file}", "--token={token}"], file: "/t/a.apns",
                topic: "com.x", token: "ab")
                == ["xcrun", "simctl", "push", "booted", "com.x", "/t/a.apns", "--token=ab"])
        let data = try SimulatorPushFile.contents(
            payload: Data(#"{"aps":{"content-available":1}}"#.utf8), topic: "com.x")
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object.keys.sorted() == ["Simulator Target Bundle", "aps"])
        #expect(object["Simulator Target Bundle"] as? String == "com.x")
        #expect(throws: SimulatorPushFile.Unusable.self) {
            try SimulatorPushFile.contents(payload: Data("[1]".utf8), topic: "com.x")
        }
    }
}
