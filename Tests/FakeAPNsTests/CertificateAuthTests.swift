import FakeAPNs
import Foundation
import TestSupport
import Testing

/// Certificate-based provider connections: a push certificate from the fake's CA, as PEM and as an
/// openssl-exported `.p12` (the way Keychain exports one), presented by curl.
@Suite struct CertificateAuthTests {
    let bundleId = "com.razeware.NASA-TV"

    func push(_ apns: FakeAPNsServer, token: String, cert: [String], topic: String? = nil, pushType: String = "alert")
        async throws -> (status: String, body: String)
    {
        var arguments = ["--silent", "--http2", "--cacert", apns.caFile.path, "--write-out", "\n%{http_code}"] + cert
        if let topic { arguments += ["-H", "apns-topic: \(topic)"] }
        arguments += [
            "-H", "apns-push-type: \(pushType)", "--data", #"{"aps":{"alert":"hi"}}"#, "\(apns.url)/3/device/\(token)",
        ]
        let result = try await ChildProcess.run("curl", arguments)
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    @Test func aPEMCertificateAuthenticatesWithoutAToken() async throws {
        try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: bundleId) { _ in }
            let issued = try apns.issuePushCertificate(bundleId: bundleId)
            let withDefaultTopic = try await push(apns, token: token, cert: ["--cert", issued.combinedFile])
            let voip = try await push(
                apns, token: token, cert: ["--cert", issued.certificateFile, "--key", issued.keyFile],
                topic: bundleId + ".voip", pushType: "voip")
            #expect(withDefaultTopic.status == "200", "\(withDefaultTopic)")
            #expect(voip.status == "200", "\(voip)")
            #expect(apns.log.entries(deviceToken: token).map(\.status) == [200, 200])
        }
    }

    /// Keys are secrets: owner-only from the moment they exist. And a bundle id names files, so one
    /// that is not a bundle id is refused before it reaches the disk.
    @Test func keysAreOwnerOnlyAndBadBundleIdsAreRefused() async throws {
        try await FakeAPNsServer.withServer { apns in
            let issued = try apns.issuePushCertificate(bundleId: bundleId)
            for file in [apns.keyFile.path, issued.keyFile, issued.combinedFile] {
                let permissions = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
                #expect(permissions == 0o600, "\(file)")
            }
            for bad in ["com/../../etc", "", ".hidden", "com.example app", String(repeating: "a", count: 156)] {
                let answer = try await CurlExchange.json(
                    "POST", apns.controlURL + "/certificates", #"{"bundleId": "\#(bad)"}"#)
                #expect(answer.status == 400, "\(bad): \(answer)")
                #expect(answer.body.contains("bundleId must be 1 to 155 letters, digits"), "\(answer)")
            }
            let good = try await CurlExchange.json(
                "POST", apns.controlURL + "/certificates", #"{"bundleId": "com.example-app.x"}"#)
            #expect(good.status == 201, "\(good)")
        }
    }

    @Test func anOpenSSLExportedP12Works() async throws {
        try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: bundleId) { _ in }
            let issued = try apns.issuePushCertificate(bundleId: bundleId)
            let p12 = URL(fileURLWithPath: issued.certificateFile).deletingLastPathComponent().appendingPathComponent(
                "push.p12")
            let export = try await ChildProcess.run(
                "openssl",
                [
                    "pkcs12", "-export", "-in", issued.certificateFile, "-inkey", issued.keyFile, "-out", p12.path,
                    "-passout", "pass:secret", "-name", "Apple Push Services: \(bundleId)",
                ])
            try #require(export.status == 0, "\(export.transcript)")
            let result = try await push(
                apns, token: token, cert: ["--cert-type", "P12", "--cert", "\(p12.path):secret"], topic: bundleId)
            #expect(result.status == "200", "\(result)")
        }
    }

    @Test func aCertificateForTheOtherEnvironmentOrAnotherAppIsRefused() async throws {
        try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: bundleId) { _ in }
            let production = try apns.issuePushCertificate(bundleId: bundleId, environments: ["production"])
            let otherApp = try apns.issuePushCertificate(bundleId: "com.example.other", environments: ["sandbox"])
            let wrongEnvironment = try await push(
                apns, token: token, cert: ["--cert", production.combinedFile], topic: bundleId)
            let wrongTopic = try await push(
                apns, token: token, cert: ["--cert", otherApp.combinedFile], topic: bundleId)
            #expect(wrongEnvironment.status == "403")
            #expect(wrongEnvironment.body == #"{"reason":"BadCertificateEnvironment"}"#)
            #expect(wrongTopic.status == "400")
            #expect(wrongTopic.body == #"{"reason":"TopicDisallowed"}"#)
        }
    }
}
