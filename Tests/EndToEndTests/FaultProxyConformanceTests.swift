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
