import FakeAPNs
import Foundation
import TestSupport
import Testing

/// Connection-level behaviour seen by the h2 library: PING answered, GOAWAY with Apple's JSON reason
/// on shutdown and after an idle period; and the plaintext h2c listener for local debugging.
@Suite struct ConnectionLifecycleTests {
    var script: String { PackagePaths.root.appendingPathComponent("Tests/Conformance/h2_session.py").path }

    @Test func pingIsAnsweredAndShutdownSaysGoAwayWithAReason() async throws {
        try await FakeAPNsServer.withServer { apns in
            let session = try RunningChild(PackagePaths.python, [script, "\(apns.port)", apns.caFile.path, "--ping"])
            let ack = await session.waitForLine(containing: "ping-ack")
            #expect(ack == "ping-ack PUSHHRNS", "\(session.output)")
            await apns.close()
            let goAway = await session.waitForLine(containing: "goaway")
            #expect(goAway == #"goaway 0 {"reason":"Shutdown"}"#, "\(session.output)")
            #expect(await session.waitForExit() == 0, "\(session.output)")
        }
    }

    /// RFC 9113 section 8.2: a malformed header block ends its stream with PROTOCOL_ERROR (1); the
    /// connection goes on, and answers a well-formed request after them (403: it has no token).
    @Test func malformedHeaderBlocksResetTheirStreamAndNothingElse() async throws {
        try await FakeAPNsServer.withServer { apns in
            let script = PackagePaths.root.appendingPathComponent("Tests/Conformance/malformed_headers.py").path
            let result = try await ChildProcess.run(PackagePaths.python, [script, "\(apns.port)", apns.caFile.path])
            #expect(result.status == 0, "\(result.transcript)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            let malformed = [
                "uppercase-name", "connection-header", "transfer-encoding", "te-not-trailers", "pseudo-after-regular",
                "unknown-pseudo", "repeated-pseudo", "no-path", "no-method", "empty-path", "space-in-name",
                "newline-in-value", "value-with-leading-space", "value-with-trailing-tab", "nul-in-value", "keep-alive",
                "proxy-connection", "upgrade", "non-ascii-name", "pseudo-header-in-trailers",
            ]
            #expect(
                lines == malformed.map { "reset \($0) 1" } + ["answered well-formed 403", "done"],
                "\(result.transcript)")
            #expect(apns.log.entries().count == 1, "only the well-formed request reached the provider API")
        }
    }

    @Test func anIdleConnectionGetsIdleTimeout() async throws {
        try await FakeAPNsServer.withServer(configure: { $0.idleTimeout = .milliseconds(300) }) { apns in
            let session = try RunningChild(PackagePaths.python, [script, "\(apns.port)", apns.caFile.path])
            let goAway = await session.waitForLine(containing: "goaway")
            #expect(goAway == #"goaway 0 {"reason":"IdleTimeout"}"#, "\(session.output)")
            #expect(await session.waitForExit() == 0, "\(session.output)")
        }
    }

    @Test func thePlaintextListenerSpeaksH2CWithPriorKnowledge() async throws {
        try await FakeAPNsServer.withServer(configure: { $0.plaintextPort = 0 }) { apns in
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let jwt = try await PythonProviderToken.sign(
                keyFile: apns.keyFile.path, keyId: apns.signingKey.keyId, teamId: apns.signingKey.teamId)
            let port = try #require(apns.plaintextPort)
            let result = try await ChildProcess.run(
                "curl",
                [
                    "--silent", "--http2-prior-knowledge", "--output", "/dev/null", "--write-out",
                    "%{http_code} %{http_version}",
                    "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app",
                    "--data", #"{"aps":{"alert":"hi"}}"#, "http://127.0.0.1:\(port)/3/device/\(token)",
                ])
            #expect(result.standardOutput == "200 2", "\(result.transcript)")
        }
    }
}
