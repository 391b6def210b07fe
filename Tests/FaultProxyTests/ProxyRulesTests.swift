import Foundation
import HarnessTimeline
import TestSupport
import Testing
import Toxics

@testable import FaultProxy

/// The fault proxy's rules for names, addresses and loops, a row each; and its cap on connections,
/// through real sockets.
@Suite struct ProxyRulesTests {
    @Test(arguments: ["web", "redis:6379", "a.b", "a_b-c~d", "x@y", "it's+(1)", String(repeating: "n", count: 200)])
    func namesAPathCarriesAsTheyAreAreTaken(_ name: String) {
        #expect(ProxyRules.nameProblem(name) == nil)
    }

    /// Issue 31's names: each was created, then could not be read, changed or deleted.
    @Test(arguments: [
        "a b", "é", "a/b", ".", "..", "a\u{0}b", "a%20b", "a?b", "a#b", String(repeating: "n", count: 201),
    ])
    func namesThatNeedPercentEncodingAreRefused(_ name: String) {
        #expect(ProxyRules.nameProblem(name) != nil)
    }

    @Test(arguments: [
        ("127.0.0.1:80", "127.0.0.1", 80), ("[::1]:8080", "::1", 8080), ("localhost:1", "localhost", 1),
        ("nginx_1.internal:443", "nginx_1.internal", 443), (":9", "127.0.0.1", 9),
        ("example.com.:65535", "example.com.", 65535),
    ])
    func upstreamsAreHostAndPort(_ text: String, _ host: String, _ port: Int) throws {
        let parsed = try ProxyRules.hostPort(text, field: "upstream")
        #expect(parsed.host == host && parsed.port == port)
    }

    @Test(arguments: [
        "[::1", "ünïcødé:80", "::1:80", "[::1]", "host", "host:", "host:0", "host:65536", "host:+80", "host: 80",
        "-bad.example:80", "a..b:80", "[127.0.0.1]:80", "[]:80", "host:0080800",
        // Addresses to the resolver, written as names: 127.0.0.1 each.
        "127.1:80", "2130706433:80", "0x7f.1:80", "127.000.000.001:80", "0x7F000001:80",
    ])
    func badUpstreamsAreRefused(_ text: String) {
        #expect(throws: ToxiproxyError.self) { try ProxyRules.hostPort(text, field: "upstream") }
    }

    @Test func aListenerMayTakeAnyPortAndTheWildcard() throws {
        #expect(try ProxyRules.hostPort("127.0.0.1:0", field: "listen").port == 0)
        #expect(try ProxyRules.hostPort(":0", field: "listen").host == "0.0.0.0")
    }

    typealias Hop = ProxyRules.Hop

    @Test func aProxyRelayingToItselfIsALoop() {
        let one = Hop(name: "a", listen: ("127.0.0.1", 4000), upstream: ("127.0.0.1", 4000))
        #expect(ProxyRules.loop(from: one, among: []) == ["a", "a"])
    }

    @Test func twoProxiesRelayingToEachOtherAreALoop() {
        let a = Hop(name: "a", listen: ("127.0.0.1", 4000), upstream: ("localhost", 4001))
        let b = Hop(name: "b", listen: ("127.0.0.1", 4001), upstream: ("127.0.0.1", 4000))
        #expect(ProxyRules.loop(from: b, among: [a]) == ["b", "a", "b"])
    }

    @Test func aChainThatLeavesTheFaultProxyIsNoLoop() {
        let a = Hop(name: "a", listen: ("127.0.0.1", 4000), upstream: ("127.0.0.1", 4001))
        let b = Hop(name: "b", listen: ("127.0.0.1", 4001), upstream: ("127.0.0.1", 80))
        #expect(ProxyRules.loop(from: a, among: [b]) == nil)
        #expect(ProxyRules.loop(from: b, among: [a]) == nil)
    }

    @Test func aListenerNotBoundYetIsReachedByNothing() {
        let a = Hop(name: "a", listen: ("127.0.0.1", 0), upstream: ("127.0.0.1", 0))
        #expect(ProxyRules.loop(from: a, among: []) == nil)
    }

    @Test(arguments: [
        (("127.0.0.1", 5), ("0.0.0.0", 5), true), (("localhost", 5), ("127.0.0.1", 5), true),
        (("::1", 5), ("::", 5), true), (("10.1.2.3", 5), ("0.0.0.0", 5), true),
        (("10.9.9.9", 5), ("0.0.0.0", 5), false),
        (("127.0.0.2", 5), ("127.0.0.1", 5), false), (("127.0.0.1", 6), ("127.0.0.1", 5), false),
        (("0.0.0.0", 5), ("127.0.0.1", 5), true), (("LOCALHOST.", 5), ("127.0.0.1", 5), true),
        (("example.com", 5), ("127.0.0.1", 5), false), (("::ffff:127.0.0.1", 5), ("127.0.0.1", 5), true),
        (("0:0:0:0:0:0:0:1", 5), ("::1", 5), true), (("::FFFF:7F00:1", 5), ("0.0.0.0", 5), true),
    ])
    func whichUpstreamsReachWhichListeners(
        _ upstream: (String, Int), _ listen: (String, Int), _ expected: Bool
    ) {
        #expect(ProxyRules.reaches((upstream.0, upstream.1), (listen.0, listen.1), local: ["10.1.2.3"]) == expected)
    }

    @Test func theCapAdmitsUpToItsLimitAndSaysTheFirstRefusalOnce() {
        var cap = ConnectionCap(limit: 2)
        var answers: [String] = []
        for step in ["admit", "admit", "admit", "admit", "release", "admit", "admit"] {
            if step == "release" {
                cap.release()
                continue
            }
            let answer = cap.admit()
            answers.append("\(answer.admitted) \(answer.firstRefusal)")
        }
        // Refused once full, said once while full; full again after a release: said again.
        #expect(answers == ["true false", "true false", "false true", "false false", "true false", "false true"])
        #expect(cap.open == 2)
    }

    @Test(arguments: [(1_024, 192), (1_048_576, 262_080), (300, 64), (0, 64)])
    func allProxiesTogetherKeepHalfTheDescriptorsLeft(_ descriptors: Int, _ connections: Int) {
        #expect(ProxyRules.maxConnectionsInAll(descriptorLimit: descriptors) == connections)
    }

    /// Issue 31's review: a proxy created disabled was not checked, and `POST /reset` enabled it into
    /// a loop. Now reset leaves it disabled and says why.
    @Test func resetDoesNotEnableAProxyIntoALoop() async throws {
        let timeline = Timeline()
        let proxy = FaultProxy(timeline: timeline, seed: 1)
        func json(_ text: String) -> Data { Data(text.utf8) }
        let a = try await proxy.create(from: json(#"{"name":"a","listen":"127.0.0.1:0","upstream":"127.0.0.1:9"}"#))
        let b = try await proxy.create(from: json(#"{"name":"b","listen":"127.0.0.1:0","upstream":"127.0.0.1:9"}"#))
        _ = try await proxy.update("b", from: json(#"{"enabled":false}"#))
        _ = try await proxy.update("b", from: json(#"{"upstream":"\#(a.listen)","enabled":false}"#))
        _ = try await proxy.update("a", from: json(#"{"upstream":"\#(b.listen)"}"#))
        await proxy.reset()
        #expect(try await proxy.proxy("b").enabled == false)
        #expect(try await proxy.proxy("a").enabled == true)
        let why = timeline.events.last { $0.kind == .proxyUpdated }?.attributes["why"] ?? ""
        #expect(why.contains("would relay to itself: b -> a -> b"), "\(why)")
        await proxy.shutdown()
    }

    /// Holds every connection open and echoes what it reads.
    static let echo = """
        import socket, threading
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
        print("listening", s.getsockname()[1], flush=True)
        def serve(c):
            while (d := c.recv(65536)): c.sendall(d)
            c.close()
        while True:
            c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
        """

    /// Opens `argv[2]` connections through the proxy at port `argv[1]` and prints, for each, what an echo
    /// of its name gave back (empty: the proxy closed it).
    static let clients = """
        import socket, sys
        port, count = int(sys.argv[1]), int(sys.argv[2])
        held = []
        for i in range(count):
            c = socket.create_connection(("127.0.0.1", port)); c.settimeout(30)
            try:
                c.sendall(b"c%d" % i)
                got = c.recv(16)
            except (BrokenPipeError, ConnectionResetError):
                got = b""
            print(i, got.decode() or "closed", flush=True)
            held.append(c)
        """

    /// Makes proxy `name` on a port of its choosing, relaying to `upstream` on loopback; returns the port.
    static func listeningPort(of proxy: FaultProxy, named name: String, upstream: String) async throws -> String {
        let made = try await proxy.create(
            from: Data("{\"name\":\"\(name)\",\"listen\":\"127.0.0.1:0\",\"upstream\":\"127.0.0.1:\(upstream)\"}".utf8))
        return try #require(made.listen.split(separator: ":").last.map(String.init))
    }

    @Test func aProxyFullOfConnectionsClosesTheNextAtOnceAndTakesOnesAgainWhenOneEnds() async throws {
        let server = try RunningChild(PackagePaths.python, ["-u", "-c", Self.echo])
        defer { server.send(SIGKILL) }
        let line = try #require(await server.waitForLine(containing: "listening"), "\(server.output)")
        let upstream = try #require(line.split(separator: " ").last.map(String.init))
        let timeline = Timeline()
        let proxy = FaultProxy(timeline: timeline, seed: 1, connectionCap: 3)
        let port = try await Self.listeningPort(of: proxy, named: "h", upstream: upstream)

        let first = try await ChildProcess.run(PackagePaths.python, ["-c", Self.clients, port, "5"])
        #expect(first.standardOutput == "0 c0\n1 c1\n2 c2\n3 closed\n4 closed\n", "\(first.transcript)")
        let limits = timeline.events.filter { $0.kind == .serviceLimitReached }
        #expect(limits.count == 1, "\(limits)")
        #expect(limits.first?.attributes["proxy"] == "h" && limits.first?.attributes["service"] == "proxy")
        #expect(limits.first?.attributes["limit"] == "3 connections")

        // The clients are gone (the script ended): the proxy takes connections again.
        await proxy.untilNoOpenConnections(of: "h")
        let again = try await ChildProcess.run(PackagePaths.python, ["-c", Self.clients, port, "1"])
        #expect(again.standardOutput == "0 c0\n", "\(again.transcript)")

        // All proxies together: two at once, whatever each proxy's own cap.
        let inAll = FaultProxy(timeline: timeline, seed: 1, connectionsInAll: 2)
        let otherPort = try await Self.listeningPort(of: inAll, named: "i", upstream: upstream)
        let third = try await ChildProcess.run(PackagePaths.python, ["-c", Self.clients, otherPort, "3"])
        #expect(third.standardOutput == "0 c0\n1 c1\n2 closed\n", "\(third.transcript)")
        #expect(timeline.events.contains { $0.attributes["limit"] == "2 connections in all" })
        await inAll.shutdown()
        await proxy.shutdown()
    }
}
