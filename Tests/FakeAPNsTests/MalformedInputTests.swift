@_spi(Fuzzing) import FakeAPNs
import Foundation
import TestSupport
import Testing

/// Garbage on the wire never takes FakeAPNs down or leaks a connection.
@Suite struct MalformedInputTests {
    static let script = """
        import socket, ssl, sys
        host, port, ca = "127.0.0.1", int(sys.argv[1]), sys.argv[2]
        # 1. Not TLS at all.
        with socket.create_connection((host, port)) as s:
            s.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" + bytes(range(256)) * 8)
            s.settimeout(5)
            try:
                s.recv(100)
            except OSError:
                pass
        # 2. TLS, then bytes that are not an HTTP/2 preface.
        context = ssl.create_default_context(cafile=ca)
        with socket.create_connection((host, port)) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" + b"\\x00\\x00\\x04\\x09\\x00\\x00\\x00\\x00\\x01garbage" * 50)
                s.settimeout(5)
                try:
                    while s.recv(4096):
                        pass
                except OSError:
                    pass
        # 3. A TLS hello cut in the middle.
        with socket.create_connection((host, port)) as s:
            s.sendall(bytes.fromhex("160301020001"))
        print("done")
        """

    @Test func garbageConnectionsAreClosedAndTheServerKeepsServing() async throws {
        try await FakeAPNsServer.withServer { apns in
            let abuse = try await ChildProcess.run(
                PackagePaths.python, ["-c", Self.script, "\(apns.port)", apns.caFile.path])
            #expect(abuse.standardOutput.contains("done"), "\(abuse.transcript)")
            let token = apns.gateway.register(topic: "com.example.app") { _ in }
            let status = try await apns.curlPush(to: token, body: "{not json")
            #expect(status == "400")
            #expect(apns.log.entries(deviceToken: token).last?.reason == "PayloadEmpty")
            try await withDeadline(.seconds(30), "every connection to close") {
                await apns.waitUntilNoConnectionIsOpen()
            }
        }
    }
}

/// The fuzzer's provider connection reaches the provider API: its seeds are requests it decides.
@Suite struct ProviderConnectionFuzzTargetTests {
    func seed(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: PackagePaths.root.appendingPathComponent("Tests/Fuzz/provider-http2/\(name)")))
    }

    @Test func aPushWithAnUnknownTokenIsDecided() throws {
        // The token is signed by no registered key: 403 InvalidProviderToken.
        #expect(FakeAPNsFuzzing.providerConnection(try seed("push-with-a-token")) == [403])
    }

    @Test func malformedNamesResetTheirStreamsAndReachNothing() throws {
        #expect(FakeAPNsFuzzing.providerConnection(try seed("malformed-names")).isEmpty)
    }
}
