import FakeAPNs
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// Apple's own command-line recipe (openssl + curl) and nghttp's view of the raw HTTP/2 exchange.
@Suite struct CommandLineClientTests {
    func startServer() async throws -> (FakeAPNsServer, String) {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        let server = try await FakeAPNsServer.start(configuration: configuration, timeline: Timeline())
        return (server, server.gateway.register(topic: "com.razeware.NASA-TV") { _ in })
    }

    @Test func applesCurlRecipeWithAnOpenSSLSignedTokenGets200() async throws {
        let (server, token) = try await startServer()
        let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/apple-curl-recipe.sh").path
        let result = try await ChildProcess.run(
            script, [],
            environment: [
                "TEAM_ID": server.signingKey.teamId, "AUTH_KEY_ID": server.signingKey.keyId,
                "TOKEN_KEY_FILE_NAME": server.keyFile.path, "TOPIC": "com.razeware.NASA-TV", "DEVICE_TOKEN": token,
                "APNS_HOST_NAME": "localhost:\(server.port)", "CA_FILE": server.caFile.path,
            ])
        await server.close()
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.hasPrefix("HTTP/2 200"), "\(result.transcript)")
        #expect(server.log.entries(deviceToken: token).map(\.status) == [200])
    }

    @Test func nghttpSeesOneStreamUntilTheFirstValidTokenThenAThousand() async throws {
        let (server, token) = try await startServer()
        let jwt = try await PythonProviderToken.sign(
            keyFile: server.keyFile.path, keyId: server.signingKey.keyId, teamId: server.signingKey.teamId)
        let payload = try PackagePaths.temporaryDirectory().appendingPathComponent("payload.json")
        try Data(#"{"aps":{"content-available":1}}"#.utf8).write(to: payload)
        let result = try await ChildProcess.run(
            "nghttp",
            [
                "--verbose", "--data", payload.path, "-H", ":method: POST", "-H", "authorization: bearer \(jwt)",
                "-H", "apns-topic: com.razeware.NASA-TV", "-H", "apns-push-type: background", "-H", "apns-priority: 5",
                "https://127.0.0.1:\(server.port)/3/device/\(token)",
            ], environment: ["SSL_CERT_FILE": server.caFile.path])
        await server.close()
        #expect(result.status == 0, "\(result.transcript)")
        let output = result.standardOutput
        #expect(output.contains("h2 is negotiated") || output.contains("The negotiated protocol: h2"), "\(output)")
        // nghttp itself advertises 100; 1 and 1000 can only be the server's.
        let first = try #require(output.range(of: "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1]"), "\(output)")
        let raised = try #require(output.range(of: "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1000]"), "\(output)")
        #expect(first.lowerBound < raised.lowerBound)
        #expect(output.contains(":status: 200"))
        #expect(output.contains("apns-id: "))
    }
}
