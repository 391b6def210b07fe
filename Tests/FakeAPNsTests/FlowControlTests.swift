import FakeAPNs
import Foundation
import TestSupport
import Testing

/// FakeAPNs reads HTTP/2 frames itself, so it must keep the receive windows open as a stream
/// multiplexer would: a long-lived connection and an oversized body must both get through.
@Suite struct FlowControlTests {
    @Test func oneConnectionCarriesFarMoreThanItsReceiveWindow() async throws {
        try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let jwt = try await PythonProviderToken.sign(
                keyFile: apns.keyFile.path, keyId: apns.signingKey.keyId, teamId: apns.signingKey.teamId)
            // 2,000 pushes of 1 KB on one connection: 30 times the 65,535-byte connection window.
            let padding = String(repeating: "x", count: 1000)
            let payload = try PackagePaths.temporaryDirectory().appendingPathComponent("payload.json")
            try Data(#"{"aps":{"content-available":1},"padding":"\#(padding)"}"#.utf8).write(to: payload)
            let result = try await ChildProcess.run(
                "h2load",
                [
                    "-n", "2000", "-c", "1", "-m", "10", "-d", payload.path, "-H", "authorization: bearer \(jwt)",
                    "-H", "apns-topic: com.example.app", "-H", "apns-push-type: background", "-H", "apns-priority: 5",
                    "\(apns.url)/3/device/\(token)",
                ], environment: ["SSL_CERT_FILE": apns.caFile.path], timeout: .seconds(60))
            #expect(result.status == 0, "\(result.transcript)")
            #expect(result.standardOutput.contains("status codes: 2000 2xx"), "\(result.transcript)")
            #expect(apns.log.entries(deviceToken: token).filter { $0.decision == "delivered" }.count == 2000)
        }
    }

    @Test func aBodyLargerThanTheStreamWindowIsReadAndRefusedAsTooLarge() async throws {
        try await FakeAPNsServer.withServer { apns in
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let jwt = try await PythonProviderToken.sign(
                keyFile: apns.keyFile.path, keyId: apns.signingKey.keyId, teamId: apns.signingKey.teamId)
            let body = try PackagePaths.temporaryDirectory().appendingPathComponent("large.json")
            try Data(#"{"aps":{"alert":"\#(String(repeating: "y", count: 200_000))"}}"#.utf8).write(to: body)
            let result = try await ChildProcess.run(
                "curl",
                [
                    "--silent", "--show-error", "--http2", "--cacert", apns.caFile.path, "--output", "-",
                    "--write-out", "\n%{http_code}", "-H", "authorization: bearer \(jwt)", "-H",
                    "apns-topic: com.example.app",
                    "--data-binary", "@\(body.path)", "\(apns.url)/3/device/\(token)",
                ], timeout: .seconds(60))
            #expect(result.status == 0, "\(result.transcript)")
            #expect(result.standardOutput.hasSuffix("\n413"), "\(result.transcript)")
            #expect(result.standardOutput.contains(#"{"reason":"PayloadTooLarge"}"#), "\(result.transcript)")
        }
    }
}
