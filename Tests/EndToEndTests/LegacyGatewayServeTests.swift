import Foundation
import TestSupport
import Testing

/// `harness serve`'s legacy gateway and feedback service as the PushChat tutorial reaches them: the
/// endpoints file names them, the control API issues the push certificate, and the tutorial's own
/// check, `openssl s_client -connect … -cert … -key …`, connects and verifies.
@Suite struct LegacyGatewayServeTests {
    /// `harness serve` with both legacy services asked for (they are off by default).
    static func serve(_ name: String) async throws -> ServedHarness {
        let folder = try PackagePaths.temporaryDirectory(name)
        let file = folder.appendingPathComponent("harness.yml")
        try "version: 1\nservices:\n  apns: {legacyPort: 2195, feedbackPort: 2196}\n".write(
            to: file, atomically: true, encoding: .utf8)
        return try await ServedHarness(name, arguments: ["--config", file.path])
    }

    @Test func theTutorialsOpensslCheckConnectsToBoth() async throws {
        let serve = try await Self.serve("legacy-gateway-serve")
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

    /// The PushChat tutorial's certificate steps, verbatim but for the passphrases typed at the prompts:
    /// the portal's `.cer` to PEM, the key out of Keychain's `.p12`, `ck.pem`, then its s_client check
    /// with the key's passphrase.
    @Test func theTutorialsCertificateStepsWorkOnTheIssuedCerAndP12() async throws {
        let serve = try await Self.serve("legacy-gateway-tutorial")
        let issued = try await CurlExchange.json(
            "POST", serve.url("apns", "controlURL") + "/certificates",
            #"{"bundleId": "com.razeware.PushChat", "environment": "sandbox", "p12Passphrase": "pushchat"}"#)
        let files = try JSONSerialization.jsonObject(with: Data(issued.body.utf8)) as? [String: String]
        let folder = try PackagePaths.temporaryDirectory()
        let cer = folder.appendingPathComponent("aps_developer_identity.cer")
        let p12 = folder.appendingPathComponent("PushChatKey.p12")
        try FileManager.default.copyItem(atPath: try #require(files?["cerFile"], "\(issued)"), toPath: cer.path)
        try FileManager.default.copyItem(atPath: try #require(files?["p12File"], "\(issued)"), toPath: p12.path)
        func openssl(_ arguments: [String]) async throws -> ChildProcess {
            try await ChildProcess.run("openssl", arguments, currentDirectory: folder)
        }
        let certificate = try await openssl([
            "x509", "-in", "aps_developer_identity.cer", "-inform", "der", "-out", "PushChatCert.pem",
        ])
        let key = try await openssl([
            "pkcs12", "-nocerts", "-out", "PushChatKey.pem", "-in", "PushChatKey.p12", "-passin", "pass:pushchat",
            "-passout", "pass:pushchat",
        ])
        let wrongPassphrase = try await openssl([
            "pkcs12", "-nocerts", "-out", "wrong.pem", "-in", "PushChatKey.p12", "-passin", "pass:not-it", "-passout",
            "pass:pushchat",
        ])
        let pem = try String(contentsOf: folder.appendingPathComponent("PushChatCert.pem"), encoding: .utf8)
        let keyPEM = try String(contentsOf: folder.appendingPathComponent("PushChatKey.pem"), encoding: .utf8)
        try (pem + keyPEM).write(to: folder.appendingPathComponent("ck.pem"), atomically: true, encoding: .utf8)
        let check = try await openssl([
            "s_client", "-connect", serve.url("apns", "legacyGateway"), "-cert", "PushChatCert.pem", "-key",
            "PushChatKey.pem", "-pass", "pass:pushchat", "-CAfile", serve.url("apns", "caFile"), "-verify_return_error",
        ])
        let combined = try await openssl([
            "s_client", "-connect", serve.url("apns", "legacyGateway"), "-cert", "ck.pem", "-pass", "pass:pushchat",
            "-CAfile", serve.url("apns", "caFile"), "-verify_return_error",
        ])
        let subject = try await openssl(["x509", "-in", "PushChatCert.pem", "-noout", "-subject"])
        #expect(await serve.stop() == 0)

        #expect(issued.status == 201, "\(issued)")
        #expect(certificate.status == 0, "\(certificate.transcript)")
        #expect(subject.standardOutput.contains("UID = com.razeware.PushChat"), "\(subject.transcript)")
        #expect(key.status == 0, "\(key.transcript)")
        #expect(keyPEM.contains("BEGIN ENCRYPTED PRIVATE KEY"), "the key, under the new passphrase: \(keyPEM)")
        #expect(wrongPassphrase.status != 0, "a wrong passphrase fails the MAC: \(wrongPassphrase.transcript)")
        for (name, run) in [("cert and key", check), ("ck.pem", combined)] {
            #expect(run.status == 0, "\(name): \(run.transcript)")
            #expect(run.standardOutput.contains("Verify return code: 0 (ok)"), "\(name): \(run.transcript)")
        }
    }
}
