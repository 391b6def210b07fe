import FakeAPNs
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// aioapns from PyPI against FakeAPNs: the reasons a real provider client surfaces must be Apple's.
@Suite struct AioapnsConformanceTests {
    struct Outcome: Decodable {
        var `case`: String
        var status: String
        var reason: String?
        var timestamp: Int64?
        var apnsId: String
        var sentId: String
    }

    /// Each case of Tests/Conformance/aioapns_conformance.py and what Apple would answer.
    static let expected: [(String, String, String?)] = [
        ("success", "200", nil),
        ("success-alert", "200", nil),
        ("bad-device-token", "400", "BadDeviceToken"),
        ("wrong-topic", "400", "DeviceTokenNotForTopic"),
        ("wrong-topic-suffix", "400", "BadTopic"),
        ("payload-too-large", "413", "PayloadTooLarge"),
        ("background-priority-10", "400", "BadPriority"),
        ("bad-message-id", "400", "BadMessageId"),
        ("bad-collapse-id", "400", "BadCollapseId"),
        ("injected-429", "429", "TooManyRequests"),
        ("injected-503-shutdown", "503", "Shutdown"),
        ("injected-500", "500", "InternalServerError"),
        ("after-injected-failures", "200", nil),
        ("unknown-key-id", "403", "InvalidProviderToken"),
        ("expired-provider-token", "403", "ExpiredProviderToken"),
        ("unregistered", "410", "Unregistered"),
    ]

    @Test func aioapnsSeesApplesAnswers() async throws {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        let timeline = Timeline()
        let server = try await FakeAPNsServer.start(configuration: configuration, timeline: timeline)
        let topic = "com.razeware.NASA-TV"
        let token = server.gateway.register(topic: topic) { _ in }
        let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/aioapns_conformance.py").path
        let result = try await ChildProcess.run(
            PackagePaths.python,
            [
                script, "\(server.port)", server.caFile.path, server.keyFile.path, server.signingKey.keyId,
                server.signingKey.teamId, topic, token, server.controlURL,
            ])
        await server.close()
        try #require(result.status == 0, "aioapns run failed (ci/test installs it into .venv): \(result.transcript)")
        let outcomes = try result.standardOutput.split(separator: "\n").map {
            try JSONDecoder().decode(Outcome.self, from: Data($0.utf8))
        }
        #expect(outcomes.map(\.case) == Self.expected.map(\.0))
        for (outcome, (name, status, reason)) in zip(outcomes, Self.expected) {
            #expect(outcome.status == status, "\(name): \(outcome)")
            #expect(outcome.reason == reason, "\(name): \(outcome)")
            #expect(outcome.apnsId == outcome.sentId, "\(name): the answer must echo the apns-id")
        }
        let unregistered = try #require(outcomes.last)
        let timestamp = try #require(unregistered.timestamp, "410 needs a timestamp")
        #expect(abs(Double(timestamp) / 1000 - Date().timeIntervalSince1970) < 300)
        let accepted = server.log.entries(deviceToken: token).filter { $0.status == 200 }
        #expect(accepted.count == 3)
    }
}
