import Foundation
import HarnessTimeline
import TestSupport
import Testing

@testable import FakeAPNs

/// The legacy binary gateway and the feedback service over real TLS sockets, with CPython's ssl as the
/// provider (Tests/Conformance/legacy_exchange.py). Apple never answers a notification it takes, so a
/// case that should be taken sends a byte that is no command after it: the error response then names
/// no identifier, which proves nothing before it was refused.
@Suite struct LegacyGatewayTests {
    let topic = "com.razeware.PushChat"

    struct Exchange: Decodable {
        var sent: Int
        var received: String?
    }

    final class Services: Sendable {
        let server: FakeAPNsServer
        let timeline: Timeline
        let certificate: PushCertificateIssuer.Issued

        init() async throws {
            var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
            configuration.port = 0
            configuration.legacyPort = 0
            configuration.feedbackPort = 0
            timeline = Timeline()
            server = try await FakeAPNsServer.start(configuration: configuration, timeline: timeline)
            certificate = try server.issuePushCertificate(bundleId: "com.razeware.PushChat")
        }

        func exchange(_ port: Int?, _ bytes: [UInt8], cut: Bool = false) async throws -> Exchange {
            let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/legacy_exchange.py").path
            let result = try await ChildProcess.run(
                PackagePaths.python,
                [
                    script, "127.0.0.1", "\(try #require(port))", certificate.certificateFile, certificate.keyFile,
                    server.caFile.path, bytes.map { String(format: "%02x", $0) }.joined(),
                ] + (cut ? ["--cut"] : []))
            try #require(result.status == 0, "\(result.transcript)")
            return try JSONDecoder().decode(Exchange.self, from: Data(result.standardOutput.utf8))
        }

        func send(_ bytes: [UInt8]) async throws -> String? {
            try await exchange(server.legacyPort, bytes).received
        }
    }

    static func bytes(hex: String) -> [UInt8] { Hex.bytes(hex)! }

    static func frame(token: String, payload: String, id: UInt32) -> [UInt8] {
        LegacyBytes.frame(token: bytes(hex: token), payload: Array(payload.utf8), id: id)
    }

    static func enhanced(token: String, payload: [UInt8], id: UInt32) -> [UInt8] {
        LegacyBytes.enhanced(id: id, expiry: 0, token: bytes(hex: token), payload: payload)
    }

    static let noCommand: [UInt8] = [0xEE]
    let alert = #"{"aps":{"alert":"Hello from the binary gateway"}}"#

    @Test func aNotificationIsTakenSilentlyAndDeliveredAndGarbageAfterItIsAProtocolError() async throws {
        let services = try await Services()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = services.server.gateway.register(topic: topic) { delivered.continuation.yield($0) }
        let answer = try await services.send(Self.frame(token: token, payload: alert, id: 1) + Self.noCommand)
        let stream = delivered.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery") { await stream.first { _ in true } })
        let refused = try await services.timeline.waitFor("the error response", timeout: .seconds(30)) {
            $0.kind == .apnsLegacyRefused
        }
        await services.server.close()
        #expect(answer == "0880" + "00000000", "status 128 naming no notification: the first was taken")
        #expect(notification.payload == alert)
        #expect(notification.topic == topic)
        #expect(refused.attributes["name"] == "Protocol error")
    }

    @Test func theFirstRefusedNotificationIsAnsweredAndWhatFollowsIsDropped() async throws {
        let services = try await Services()
        let token = services.server.gateway.register(topic: topic) { _ in }
        let unknown = String(repeating: "ab", count: 32)
        let answer = try await services.send(
            Self.frame(token: unknown, payload: alert, id: 5) + Self.frame(token: token, payload: alert, id: 6))
        let accepted = services.timeline.events.filter { $0.kind == .apnsAccepted }
        await services.server.close()
        #expect(answer == "0808" + "00000005", "invalid token, notification 5")
        #expect(accepted.isEmpty, "notification 6 came after the refused one: \(accepted)")
    }

    @Test(
        arguments: [
            (
                "oversized payload", 7, 9,
                LegacyGatewayTests.enhanced(
                    token: String(repeating: "00", count: 32), payload: .init(repeating: 0x20, count: 257), id: 9)
            ),
            (
                "missing payload", 4, 3,
                LegacyGatewayTests.enhanced(token: String(repeating: "00", count: 32), payload: [], id: 3)
            ),
            (
                "short token", 5, 4,
                [1] + LegacyBytes.be32(4) + LegacyBytes.be32(0) + LegacyBytes.be16(31)
                    + [UInt8](repeating: 0, count: 31)
            ),
            ("unknown command", 128, 0, [9, 0, 0]),
            (
                "item repeated", 128, 12,
                [2] + LegacyBytes.be32(3 + 32 + 3 + 2 + 3 + 4 + 3 + 4) + [1] + LegacyBytes.be16(32)
                    + [UInt8](repeating: 1, count: 32) + [2] + LegacyBytes.be16(2)
                    + Array("{}".utf8) + [3] + LegacyBytes.be16(4) + LegacyBytes.be32(12) + [3]
                    + LegacyBytes.be16(4) + LegacyBytes.be32(12)
            ),
        ] as [(String, UInt8, UInt32, [UInt8])])
    func aMalformedCommandGetsApplesStatusAndItsIdentifier(name: String, status: UInt8, id: UInt32, bytes: [UInt8])
        async throws
    {
        let services = try await Services()
        let answer = try await services.send(bytes)
        await services.server.close()
        #expect(answer == String(format: "08%02x%08x", status, id), "\(name)")
    }

    @Test func aRemovedAppsTokenIsTakenAndComesBackFromTheFeedbackServiceOnce() async throws {
        let services = try await Services()
        let token = services.server.gateway.register(topic: topic) { _ in }
        let other = services.server.gateway.register(topic: "com.example.other") { _ in }
        let removedAt = Date(timeIntervalSince1970: 1_800_000_000)
        services.server.gateway.unregister(token, at: removedAt)
        services.server.gateway.unregister(other, at: removedAt)
        let answer = try await services.send(Self.frame(token: token, payload: alert, id: 21) + Self.noCommand)
        let first = try await services.exchange(services.server.feedbackPort, [])
        let second = try await services.exchange(services.server.feedbackPort, [])
        await services.server.close()
        #expect(answer == "0880" + "00000000", "no error for a removed app's token")
        // time (4) | length (2) | token: only the certificate's own topic.
        #expect(first.received == String(format: "%08x", 1_800_000_000) + "0020" + token)
        #expect(second.received == "", "the list is cleared once read")
    }

    @Test func aFrameCutInTheMiddleIsDroppedAndSaidOnTheTimeline() async throws {
        let services = try await Services()
        let token = services.server.gateway.register(topic: topic) { _ in }
        let whole = Self.frame(token: token, payload: alert, id: 31)
        _ = try await services.exchange(services.server.legacyPort, Array(whole.prefix(20)), cut: true)
        let truncated = try await services.timeline.waitFor("the cut frame", timeout: .seconds(30)) {
            $0.kind == .apnsLegacyTruncated
        }
        let accepted = services.timeline.events.filter { $0.kind == .apnsAccepted }
        await services.server.close()
        #expect(truncated.attributes["bytes"] == "20")
        #expect(accepted.isEmpty)
    }

    @Test func shutdownAnswersStatusTenWithTheLastNotificationTaken() async throws {
        let services = try await Services()
        let token = services.server.gateway.register(topic: topic) { _ in }
        let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/legacy_exchange.py").path
        let bytes = Self.frame(token: token, payload: alert, id: 40) + Self.frame(token: token, payload: alert, id: 41)
        let port = try #require(services.server.legacyPort)
        let arguments = [
            script, "127.0.0.1", "\(port)", services.certificate.certificateFile, services.certificate.keyFile,
            services.server.caFile.path, bytes.map { String(format: "%02x", $0) }.joined(),
        ]
        async let client = ChildProcess.run(PackagePaths.python, arguments)
        _ = try await services.timeline.waitFor("both notifications taken", timeout: .seconds(30)) { _ in
            services.timeline.events.filter { $0.kind == .apnsAccepted }.count == 2
        }
        await services.server.close()
        let result = try await client
        try #require(result.status == 0, "\(result.transcript)")
        let exchange = try JSONDecoder().decode(Exchange.self, from: Data(result.standardOutput.utf8))
        #expect(exchange.received == "080a" + String(format: "%08x", 41))
    }

    struct PushjackRun: Decodable {
        struct Outcome: Decodable {
            var successes: [String]
            var failures: [String: String]
        }
        struct Expired: Decodable {
            var token: String
            var timestamp: Int
        }
        var bulk: Outcome
        var oversized: Outcome
        var feedback: [Expired]
        var feedbackAgain: Int
    }

    /// pushjack from PyPI: a bulk send where the gateway refuses two unknown tokens (pushjack sends the
    /// rest again after each error response, as Apple asked), an oversized payload, and the feedback
    /// service read twice.
    @Test func pushjackSendsGetsApplesErrorsAndReadsTheFeedbackService() async throws {
        let services = try await Services()
        let good = (0..<2).map { _ in services.server.gateway.register(topic: topic) { _ in } }
        let removed = services.server.gateway.register(topic: topic) { _ in }
        services.server.gateway.unregister(removed, at: Date(timeIntervalSince1970: 1_700_000_000))
        let unknown = (0..<2).map { String(repeating: "\($0 + 1)f", count: 32) }
        let tokens: [String: [String]] = [
            "bulk": [good[0], unknown[0], good[1], unknown[1]], "oversized": [good[0]],
        ]
        let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/legacy_pushjack.py").path
        let result = try await ChildProcess.run(
            PackagePaths.python,
            [
                script, "127.0.0.1", "\(try #require(services.server.legacyPort))",
                "\(try #require(services.server.feedbackPort))", services.certificate.combinedFile,
                String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self),
            ])
        let accepted = services.timeline.events.filter { $0.kind == .apnsAccepted }.compactMap {
            $0.attributes["deviceToken"]
        }
        await services.server.close()
        try #require(result.status == 0, "pushjack (ci/test installs it into .venv): \(result.transcript)")
        let run = try JSONDecoder().decode(PushjackRun.self, from: Data(result.standardOutput.utf8))
        #expect(run.bulk.successes == good, "\(run.bulk)")
        #expect(
            run.bulk.failures == [unknown[0]: "APNSInvalidTokenError", unknown[1]: "APNSInvalidTokenError"],
            "\(run.bulk)")
        #expect(accepted == good, "each good token taken once, the second after pushjack sent it again")
        #expect(run.oversized.failures == [good[0]: "APNSInvalidPayloadSizeError"], "\(run.oversized)")
        #expect(run.feedback.map(\.token) == [removed])
        #expect(run.feedback.first?.timestamp == 1_700_000_000)
        #expect(run.feedbackAgain == 0, "the list is cleared once read")
    }
}
