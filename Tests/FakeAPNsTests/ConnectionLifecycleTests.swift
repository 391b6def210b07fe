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
                    "--silent", "--http2-prior-knowledge", "--output", "/dev/null", "--write-out", "%{http_code} %{http_version}",
                    "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: com.example.app",
                    "--data", #"{"aps":{"alert":"hi"}}"#, "http://127.0.0.1:\(port)/3/device/\(token)",
                ])
            #expect(result.standardOutput == "200 2", "\(result.transcript)")
        }
    }
}
