import FakeAPNs
import Foundation
import TestSupport
import Testing

@Suite struct ScopedServerTests {
    @Test func aScopedServerServesInsideAndIsGoneAfter() async throws {
        let port = try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let jwt = try await PythonProviderToken.sign(
                keyFile: apns.keyFile.path, keyId: apns.signingKey.keyId, teamId: apns.signingKey.teamId)
            let result = try await ChildProcess.run(
                "curl",
                [
                    "--silent", "--http2", "--cacert", apns.caFile.path, "--output", "/dev/null", "--write-out",
                    "%{http_code}", "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app",
                    "--data", #"{"aps":{"alert":"hi"}}"#, "\(apns.url)/3/device/\(token)",
                ])
            #expect(result.standardOutput == "200")
            #expect(apns.log.entries(deviceToken: token).map(\.status) == [200])
            return apns.port
        }
        let after = try await ChildProcess.run(
            "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{http_code}", "https://127.0.0.1:\(port)/"])
        #expect(after.standardOutput == "000", "the server still answers after the scope")
    }
}
