import FakeAPNs
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// FakeAPNs over real TLS and HTTP/2, driven by clients nobody here wrote: curl (nghttp2) with a
/// provider token made by Python's `cryptography`.
@Suite struct FakeAPNsServerTests {
    func startServer() async throws -> (FakeAPNsServer, Timeline) {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        let timeline = Timeline()
        return (try await FakeAPNsServer.start(configuration: configuration, timeline: timeline), timeline)
    }

    /// A JWT signed with the server's `.p8` by Python, as a backend in another language would.
    func providerToken(_ server: FakeAPNsServer) async throws -> String {
        try await PythonProviderToken.sign(
            keyFile: server.keyFile.path, keyId: server.signingKey.keyId, teamId: server.signingKey.teamId)
    }

    @Test func curlPostsASilentPushOverHTTP2AndTheDeviceReceivesIt() async throws {
        let (server, timeline) = try await startServer()
        let received = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = server.gateway.register(topic: "com.razeware.NASA-TV") { notification in
            received.continuation.yield(notification)
        }
        let jwt = try await providerToken(server)
        let result = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--show-error", "--http2", "--cacert", server.caFile.path, "--dump-header", "-",
                "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.razeware.NASA-TV",
                "-H", "apns-push-type: background", "-H", "apns-priority: 5",
                "--data", #"{"aps":{"content-available":1}}"#, "\(server.url)/3/device/\(token)",
            ])
        await server.close()
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.hasPrefix("HTTP/2 200"), "\(result.transcript)")
        let apnsId = result.standardOutput.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-id:") }
            .map { $0.dropFirst("apns-id:".count).trimmingCharacters(in: .whitespaces) }
        let stream = received.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery to the device") { await stream.first { _ in true } })
        #expect(notification.apnsId == apnsId)
        #expect(notification.payload == #"{"aps":{"content-available":1}}"#)
        #expect(timeline.events.contains { $0.kind == .apnsAccepted && $0["apnsId"] == apnsId })
    }

    @Test func aRejectionCarriesApplesReasonAsJSON() async throws {
        let (server, _) = try await startServer()
        let jwt = try await providerToken(server)
        let result = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--http2", "--cacert", server.caFile.path, "--write-out", "\n%{http_code}",
                "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.razeware.NASA-TV",
                "--data", #"{"aps":{"alert":"hi"}}"#, "\(server.url)/3/device/\(String(repeating: "0", count: 64))",
            ])
        await server.close()
        #expect(result.standardOutput == "{\"reason\":\"BadDeviceToken\"}\n400", "\(result.transcript)")
        #expect(server.log.all.last?.reason == "BadDeviceToken")
    }

    @Test func theControlAPIRegistersDevices() async throws {
        let (server, _) = try await startServer()
        let result = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--show-error", "-X", "POST", "-H", "content-type: application/json",
                "--data", #"{"topic":"com.example.app","environment":"sandbox"}"#,
                "http://127.0.0.1:\(server.controlAPI.port)/devices",
            ])
        await server.close()
        let body = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let token = try #require(body?["deviceToken"] as? String, "\(result.transcript)")
        #expect(body?["online"] as? Bool == true)
        #expect(token.count == 64)
        #expect(server.gateway.topic(of: token) == "com.example.app")
    }
}
