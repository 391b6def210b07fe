import FaultProxy
import Foundation
import TestSupport
import Testing

/// The proxy's own relaying, with Python sockets on both sides: a client that half-closes still gets
/// the whole answer, and a cut after N bytes delivers all N to a client that reads slowly (a small
/// receive buffer, so the proxy's writes queue up behind it).
@Suite struct ProxiedConnectionTests {
    /// A server that reads until the client half-closes, then answers 5 MiB and closes.
    static let upstream = """
        import socket, threading
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
        print("listening", s.getsockname()[1], flush=True)
        body = bytes(range(256)) * 20480
        def serve(c):
            while c.recv(65536): pass
            c.sendall(body); c.close()
        while True:
            c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
        """

    /// A client with a small receive buffer: sends, half-closes, reads everything; prints the count and
    /// whether the bytes are the server's from the start.
    static let client = """
        import socket, sys
        c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.connect(("127.0.0.1", int(sys.argv[1]))); c.sendall(b"hello"); c.shutdown(socket.SHUT_WR)
        got = bytearray()
        while (d := c.recv(1024)): got += d
        body = bytes(range(256)) * 20480
        print(len(got), body.startswith(bytes(got)), flush=True)
        """

    func through(_ proxy: FaultProxy, port: Int) async throws -> String {
        let listen = try await proxy.proxy("h").listen
        let port = try #require(listen.split(separator: ":").last.map { String($0) })
        let result = try await ChildProcess.run(PackagePaths.python, ["-c", Self.client, port])
        #expect(result.status == 0, "\(result.transcript)")
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `script`, a Python server that prints `listening PORT`, and a proxy `h` in front of it.
    static func proxied(_ script: String) async throws -> (RunningChild, FaultProxy) {
        let server = try RunningChild(PackagePaths.python, ["-u", "-c", script])
        let line = try #require(await server.waitForLine(containing: "listening"), "\(server.output)")
        let port = try #require(line.split(separator: " ").last.map { String($0) })
        let proxy = FaultProxy(seed: 1)
        _ = try await proxy.create(
            from: Data("{\"name\":\"h\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:\(port)\"}".utf8))
        return (server, proxy)
    }

    @Test func aHalfClosingClientGetsTheWholeAnswerAndACutDeliversEveryByteBeforeIt() async throws {
        let (server, proxy) = try await Self.proxied(Self.upstream)
        defer { server.send(SIGKILL) }

        #expect(try await through(proxy, port: 0) == "5242880 True")
        _ = try await proxy.addToxic(to: "h", from: Data("{\"type\":\"latency\",\"attributes\":{\"latency\":50}}".utf8))
        #expect(try await through(proxy, port: 0) == "5242880 True")
        try await proxy.removeToxic("latency_downstream", of: "h")
        _ = try await proxy.addToxic(
            to: "h", from: Data("{\"type\":\"limit_data\",\"attributes\":{\"bytes\":3000000}}".utf8))
        #expect(try await through(proxy, port: 0) == "3000000 True")
        // The client has seen its end; the proxy's side towards the server closes a moment later.
        try await withDeadline(.seconds(60), "every proxied connection to end") {
            await proxy.untilNoOpenConnections(of: "h")
        }
        #expect(await proxy.openConnections(of: "h") == 0)
        await proxy.shutdown()
    }

    /// A server that answers 60,000 bytes and resets (linger 0), and a client that reads until the
    /// end and says how it ended.
    static let resettingUpstream = """
        import socket, struct, threading
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
        print("listening", s.getsockname()[1], flush=True)
        def serve(c):
            c.recv(100); c.sendall(bytes(range(250)) * 240)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)); c.close()
        while True:
            c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
        """

    static let readingClient = """
        import socket, sys
        c = socket.socket(); c.connect(("127.0.0.1", int(sys.argv[1]))); c.sendall(b"hello")
        got, how = bytearray(), "FIN"
        try:
            while (d := c.recv(4096)): got += d
        except ConnectionResetError:
            how = "RST"
        print(len(got), bytes(got) == (bytes(range(250)) * 240)[:len(got)], how, flush=True)
        """

    @Test func aPeersResetFollowsWhatItSentThroughTheToxics() async throws {
        let (server, proxy) = try await Self.proxied(Self.resettingUpstream)
        defer { server.send(SIGKILL) }
        // 100 KB/s: the 60,000 bytes take 0.6 s, and the server's reset comes long before they are through.
        _ = try await proxy.addToxic(to: "h", from: Data("{\"type\":\"bandwidth\",\"attributes\":{\"rate\":100}}".utf8))
        let listen = try await proxy.proxy("h").listen
        let proxyPort = try #require(listen.split(separator: ":").last.map { String($0) })
        let result = try await ChildProcess.run(PackagePaths.python, ["-c", Self.readingClient, proxyPort])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "60000 True RST")
        await proxy.shutdown()
    }
}
