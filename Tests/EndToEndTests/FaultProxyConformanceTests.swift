import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `harness fault-proxy` driven by toxiproxy-python and by plain calls to Toxiproxy's documented API,
/// in front of nginx (Tests/Conformance/toxiproxy_conformance.py has the checks); the timeline it
/// prints names every toxic and every connection a toxic ended.
@Suite struct FaultProxyConformanceTests {
    /// A root for nginx: a small text file and a 1.5 MB body.
    func root() throws -> URL {
        let root = try PackagePaths.temporaryDirectory("fault-proxy-root")
        try Data("hello from nginx\n".utf8).write(to: root.appendingPathComponent("small.txt"))
        try Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(
            to: root.appendingPathComponent("large.bin"))
        for name in ["small.txt", "large.bin"] { chmod(root.appendingPathComponent(name).path, 0o644) }
        return root
    }

    @Test func toxiproxyClientsDriveTheFaultProxyInFrontOfNginx() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        let proxy = try RunningChild(HarnessCommand.path, ["fault-proxy", "--port", "0", "--seed", "7"])
        let announced = try #require(
            await proxy.waitForLine(containing: "fault proxy API on http://127.0.0.1:"), "\(proxy.output)")
        let port = try #require(announced.split(separator: ":").last.flatMap { Int(String($0)) }, "\(announced)")

        let check = try await ChildProcess.run(
            PackagePaths.python,
            [
                PackagePaths.root.appendingPathComponent("Tests/Conformance/toxiproxy_conformance.py").path,
                String(port), "127.0.0.1:" + String(nginx.port), String(nginx.port),
            ], timeout: .seconds(300))
        #expect(check.status == 0, "\(check.transcript)")
        #expect(check.standardOutput.contains("all checks passed"), "\(check.transcript)")

        // The timeline the proxy printed: each toxic as it came and went, the cuts, the dead upstream.
        _ = await proxy.waitForLine(containing: "proxy.upstream.refused")
        let output = proxy.output
        for line in [
            "proxy.created", "proxy.toxic.added", "proxy.toxic.removed", "proxy.updated", "proxy.upstream.refused",
        ] {
            #expect(output.contains(line), "\(line) in \(output)")
        }
        #expect(output.contains("type=reset_peer"))
        let cuts = output.split(separator: "\n").filter { $0.contains("proxy.connection.cut") }
        #expect(cuts.contains { $0.contains("how=RST") }, "\(cuts)")
        #expect(cuts.contains { $0.contains("how=FIN") && $0.contains("atByte=1000") }, "\(cuts)")
        proxy.send(SIGTERM)
        #expect(await proxy.waitForExit() == 0, "\(proxy.output)")
        #expect(await nginx.stop() == 0)
    }

    /// Issue 31's inputs to the API, each refused at creation with Toxiproxy's 400 and the reason: two
    /// proxies relaying to each other and one relaying to itself (a client made 20,000 descriptors in
    /// 15 s), names a path cannot carry as they are (created, then never found again), upstreams that
    /// are not host:port. Nothing already made changes, and the API answers on.
    @Test func loopsUnreachableNamesAndBadUpstreamsAreRefusedAtCreation() async throws {
        let proxy = try RunningChild(HarnessCommand.path, ["fault-proxy", "--port", "0", "--seed", "7"])
        let announced = try #require(
            await proxy.waitForLine(containing: "fault proxy API on http://127.0.0.1:"), "\(proxy.output)")
        let port = try #require(announced.split(separator: ":").last.flatMap { Int(String($0)) }, "\(announced)")
        let api = "http://127.0.0.1:\(port)"
        func listenPort(_ answer: CurlExchange) throws -> String {
            let object = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
            let listen = try #require(object?["listen"] as? String, "\(answer)")
            return String(listen.split(separator: ":").last ?? "")
        }

        let a = try await CurlExchange.json(
            "POST", api + "/proxies", #"{"name": "a", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:9"}"#)
        #expect(a.status == 201, "\(a)")
        let aPort = try listenPort(a)
        // b in front of a is a chain, not a loop.
        let b = try await CurlExchange.json(
            "POST", api + "/proxies", #"{"name": "b", "listen": "127.0.0.1:0", "upstream": "127.0.0.1:\#(aPort)"}"#)
        #expect(b.status == 201, "\(b)")
        let bPort = try listenPort(b)
        let loop = try await CurlExchange.json("POST", api + "/proxies/a", #"{"upstream": "localhost:\#(bPort)"}"#)
        #expect(loop.status == 400, "\(loop)")
        #expect(loop.body.contains(#"would relay to itself: a -> b -> a (a loop"#), "\(loop)")
        let itself = try await CurlExchange.json("POST", api + "/proxies/b", #"{"upstream": "127.0.0.1:\#(bPort)"}"#)
        #expect(itself.status == 400 && itself.body.contains("b -> b"), "\(itself)")
        let kept = try await CurlExchange.run([api + "/proxies/a"])
        #expect(kept.status == 200 && kept.body.contains(#""upstream":"127.0.0.1:9""#), "unchanged: \(kept)")

        for name in ["a b", "é", "a/b", ".", "..", "a\\u0000b"] {
            let made = try await CurlExchange.json(
                "POST", api + "/proxies", #"{"name": "\#(name)", "upstream": "127.0.0.1:9"}"#)
            #expect(made.status == 400, "\(name): \(made)")
            #expect(made.body.contains("so that /proxies/{name} reaches it"), "\(name): \(made)")
        }
        for upstream in ["[::1", "ünïcødé:80"] {
            let made = try await CurlExchange.json(
                "POST", api + "/proxies", #"{"name": "u", "upstream": "\#(upstream)"}"#)
            #expect(made.status == 400, "\(upstream): \(made)")
            #expect(made.body.contains("upstream must be host:port"), "\(upstream): \(made)")
        }
        let all = try await CurlExchange.run([api + "/proxies"])
        let names = (try JSONSerialization.jsonObject(with: Data(all.body.utf8)) as? [String: Any])?.keys.sorted()
        #expect(names == ["a", "b"], "\(all)")
        // A name written percent-encoded reaches its proxy too.
        let encoded = try await CurlExchange.json(
            "POST", api + "/proxies", #"{"name": "redis:6379", "upstream": "127.0.0.1:9"}"#)
        #expect(encoded.status == 201, "\(encoded)")
        let deleted = try await CurlExchange.run(["-X", "DELETE", api + "/proxies/redis%3A6379"])
        #expect(deleted.status == 204, "\(deleted)")
        let version = try await CurlExchange.run([api + "/version"])
        #expect(version.status == 200, "\(version)")
        proxy.send(SIGTERM)
        #expect(await proxy.waitForExit() == 0, "\(proxy.output)")
    }

    @Test func badStartsExitTwoSayingWhy() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let config = folder.appendingPathComponent("proxies.json")
        try Data("[{\"name\": \"a\"}]".utf8).write(to: config)
        for (arguments, words) in [
            (["--port", "70000"], "--port takes 0 to 65535, not 70000"),
            (["--port", "0", "--config", folder.appendingPathComponent("none.json").path], "the file cannot be read"),
            (["--port", "0", "--config", config.path], "missing required field: upstream at proxy 1"),
        ] {
            let result = try await HarnessCommand.run(["fault-proxy"] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.transcript)")
            #expect(result.standardError.contains(words), "\(arguments): \(result.transcript)")
        }
    }
}
