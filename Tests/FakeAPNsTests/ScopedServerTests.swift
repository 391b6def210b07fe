import FakeAPNs
import Foundation
import TestSupport
import Testing

@Suite struct ScopedServerTests {
    @Test func aScopedServerServesInsideAndIsGoneAfter() async throws {
        let port = try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let status = try await apns.curlPush(to: token, body: #"{"aps":{"alert":"hi"}}"#)
            #expect(status == "200")
            #expect(apns.log.entries(deviceToken: token).map(\.status) == [200])
            return apns.port
        }
        let after = try await ChildProcess.run(
            "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{http_code}", "https://127.0.0.1:\(port)/"])
        #expect(after.standardOutput == "000", "the server still answers after the scope")
    }
}
