import Foundation
import TestSupport
import Testing

/// `harness serve`'s legacy gateway and feedback service as the PushChat tutorial reaches them: the
/// endpoints file names them, the control API issues the push certificate, and the tutorial's own
/// check, `openssl s_client -connect … -cert … -key …`, connects and verifies.
@Suite struct LegacyGatewayServeTests {
    @Test func theTutorialsOpensslCheckConnectsToBoth() async throws {
        let serve = try await ServedHarness("legacy-gateway-serve")
        let issued = try await CurlExchange.json(
            "POST", serve.url("apns", "controlURL") + "/certificates",
            #"{"bundleId": "com.razeware.PushChat", "environment": "sandbox"}"#)
        let files = try JSONSerialization.jsonObject(with: Data(issued.body.utf8)) as? [String: String]
        let certificate = try #require(files?["certificateFile"], "\(issued)")
        let key = try #require(files?["keyFile"], "\(issued)")
        var checks: [(String, ChildProcess)] = []
        for service in ["legacyGateway", "feedback"] {
            let address = serve.url("apns", service)
            let check = try await ChildProcess.run(
                "openssl",
                [
                    "s_client", "-connect", address, "-cert", certificate, "-key", key, "-CAfile",
                    serve.url("apns", "caFile"), "-verify_return_error",
                ])
            checks.append((address, check))
        }
        // TLS 1.2, where a missing client certificate fails the handshake itself (1.3 fails it later).
        let withoutCertificate = try await ChildProcess.run(
            "openssl",
            [
                "s_client", "-tls1_2", "-connect", serve.url("apns", "legacyGateway"), "-CAfile",
                serve.url("apns", "caFile"),
            ])
        #expect(await serve.stop() == 0)

        #expect(issued.status == 201, "\(issued)")
        for (address, check) in checks {
            #expect(address.hasPrefix("127.0.0.1:"), "the endpoints file names it: \(address)")
            #expect(check.status == 0, "\(address): \(check.transcript)")
            #expect(check.standardOutput.contains("Verify return code: 0 (ok)"), "\(address): \(check.transcript)")
        }
        // Apple's gateway wanted a push certificate in the handshake; so does FakeAPNs's.
        #expect(withoutCertificate.status != 0, "\(withoutCertificate.transcript)")
    }
}
