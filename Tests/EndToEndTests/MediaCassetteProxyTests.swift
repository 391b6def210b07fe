import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The media server in front of a server nobody here wrote (nginx), recording what passes through and
/// then serving it with nginx stopped; a HAR written by mitmproxy in front of nginx served back; and a
/// cassette checked by haralyzer and a HAR 1.2 schema. curl is the client throughout.
@Suite struct MediaCassetteProxyTests {
    static let photo: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }

    /// A folder with the photo at `photos/a.jpg`.
    func root() throws -> URL {
        let root = try PackagePaths.temporaryDirectory("nginx-root")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try Data(Self.photo).write(to: root.appendingPathComponent("photos/a.jpg"))
        chmod(root.appendingPathComponent("photos").path, 0o755)
        chmod(root.appendingPathComponent("photos/a.jpg").path, 0o644)
        return root
    }

    /// What curl saw: the status line, the headers that matter, and the body's bytes.
    struct Seen: Equatable, CustomStringConvertible {
        var head: [String]
        var body: Data
        var description: String { "\(head) \(body.count) bytes" }
    }

    static let requests: [(path: String, arguments: [String])] = [
        ("/photos/a.jpg", []),
        ("/photos/a.jpg", ["--range", "1000-1999"]),
        ("/photos/a.jpg", ["--range", "299000-"]),
        ("/missing.jpg", []),
    ]

    func fetch(_ url: String, _ arguments: [String]) async throws -> Seen {
        let output = try PackagePaths.temporaryDirectory("curl").appendingPathComponent("body")
        let result = try await ChildProcess.run(
            "curl", ["--silent", "--dump-header", "-", "--output", output.path] + arguments + [url])
        let kept = ["content-length", "content-range", "content-type", "etag", "last-modified", "accept-ranges"]
        let head = result.standardOutput.lowercased().split(separator: "\r\n").map(String.init).filter { line in
            line.hasPrefix("http/") || kept.contains { line.hasPrefix($0 + ":") }
        }
        return Seen(head: head, body: (try? Data(contentsOf: output)) ?? Data())
    }

    @Test func recordedThroughTheProxyThenServedWithNginxStopped() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        var direct: [Seen] = []
        for request in Self.requests { direct.append(try await fetch(nginx.url + request.path, request.arguments)) }
        #expect(direct[0].body == Data(Self.photo))
        #expect(direct[1].head.first?.hasPrefix("http/1.1 206") == true)

        let cassette = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let proxy = try await ServedHarness(
            "record-through", arguments: ["--media-upstream", nginx.url, "--record", cassette.path])
        var proxied: [Seen] = []
        for request in Self.requests {
            proxied.append(try await fetch(proxy.url("media") + request.path, request.arguments))
        }
        #expect(await proxy.stop() == 0)
        #expect(proxy.process.output.contains("cassette: \(cassette.path)"), "\(proxy.process.output)")
        #expect(proxied == direct, "through the proxy, the same as from nginx")
        #expect(await nginx.stop() == 0)

        let offline = try await ServedHarness("served-offline", arguments: ["--replay", cassette.path])
        for (index, request) in Self.requests.enumerated() {
            let again = try await fetch(offline.url("media") + request.path, request.arguments)
            #expect(again == direct[index], "\(request)")
        }
        // none mode: a request the cassette lacks gets the documented answer at once.
        let unrecorded = try await ChildProcess.run(
            "curl", ["--silent", "--include", "--max-time", "10", offline.url("media") + "/photos/b.jpg"])
        #expect(unrecorded.status == 0, "curl did not time out: \(unrecorded.transcript)")
        #expect(unrecorded.standardOutput.hasPrefix("HTTP/1.1 502"))
        #expect(unrecorded.standardOutput.contains("X-PushHarness-Not-Recorded: GET /photos/b.jpg"))
        #expect(unrecorded.standardOutput.contains("the nearest recorded request is GET /photos/a.jpg"))
        // Matching is a setting: by default another query is another request; matched on method and
        // path alone, with no header compared, a ranged request for it is cut from the recorded whole
        // photo, as nginx cuts it.
        let otherQuery = try await fetch(offline.url("media") + "/photos/a.jpg?v=2", ["--range", "0-99"])
        #expect(otherQuery.head.first?.hasPrefix("http/1.1 502") == true, "\(otherQuery)")
        #expect(await offline.stop() == 0)
        let loose = try await ServedHarness(
            "served-loosely",
            arguments: ["--replay", cassette.path, "--match-on", "method,path", "--match-headers", ""])
        let matched = try await fetch(loose.url("media") + "/photos/a.jpg?v=2", ["--range", "1000-1999"])
        #expect(ReplayedRangeTests.comparable(matched) == ReplayedRangeTests.comparable(direct[1]), "\(matched)")
        #expect(await loose.stop() == 0)

        // The cassette holds what nginx served: haralyzer and the HAR 1.2 schema agree, and every
        // body hashes to what was served.
        let check = try await ChildProcess.run(
            PackagePaths.python,
            [PackagePaths.root.appendingPathComponent("Tests/Conformance/har_check.py").path, cassette.path])
        #expect(check.status == 0, "\(check.transcript)")
        #expect(check.standardOutput.contains("ok 4 entries"), "\(check.transcript)")
    }

    @Test func withAnUpstreamAloneEveryRequestIsForwarded() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        let proxy = try await ServedHarness("upstream-only", arguments: ["--media-upstream", nginx.url])
        for request in Self.requests {
            let direct = try await fetch(nginx.url + request.path, request.arguments)
            #expect(try await fetch(proxy.url("media") + request.path, request.arguments) == direct, "\(request)")
        }
        #expect(await proxy.stop() == 0)
        #expect(await nginx.stop() == 0)
    }

    @Test func newEpisodesForwardsAndAddsWhatTheCassetteLacks() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        let cassette = try PackagePaths.temporaryDirectory().appendingPathComponent("cassette")
        let first = try await ServedHarness(
            "episode-one", arguments: ["--media-upstream", nginx.url, "--record", cassette.path])
        let whole = try await fetch(first.url("media") + "/photos/a.jpg", [])
        #expect(await first.stop() == 0)

        let second = try await ServedHarness(
            "episode-two",
            arguments: ["--media-upstream", nginx.url, "--cassette", cassette.path, "--record-mode", "new_episodes"])
        #expect(try await fetch(second.url("media") + "/photos/a.jpg", []) == whole)
        // Another query is another request: forwarded (a range of the recorded one would be cut from it).
        let part = try await fetch(second.url("media") + "/photos/a.jpg?v=2", ["--range", "0-99"])
        #expect(part.body == Data(Self.photo.prefix(100)))
        #expect(await second.stop() == 0)
        #expect(await nginx.stop() == 0)

        let har = try String(contentsOf: cassette.appendingPathComponent("traffic.har"), encoding: .utf8)
        #expect(har.components(separatedBy: "\"startedDateTime\"").count - 1 == 2, "the whole file and the new range")
        let offline = try await ServedHarness("episodes-offline", arguments: ["--replay", cassette.path])
        #expect(try await fetch(offline.url("media") + "/photos/a.jpg?v=2", ["--range", "0-99"]) == part)
        #expect(try await fetch(offline.url("media") + "/photos/a.jpg", []) == whole)
        #expect(await offline.stop() == 0)
    }

    @Test func aHARThatMitmproxyWroteInFrontOfNginxIsServedBack() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        let har = try PackagePaths.temporaryDirectory().appendingPathComponent("flows.har")
        let mitmproxy = try await ListeningPeer.mitmdump(reverseTo: nginx.url, har: har)
        var seen: [Seen] = []
        for request in Self.requests { seen.append(try await fetch(mitmproxy.url + request.path, request.arguments)) }
        // mitmdump writes the HAR as it exits (SIGTERM: a child of the test runner may have SIGINT ignored).
        _ = await mitmproxy.stop(SIGTERM)
        #expect(await nginx.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: har.path), "\(mitmproxy.process.output)")
        #expect(seen[0].body == Data(Self.photo))

        let served = try await ServedHarness("mitmproxy-har", arguments: ["--replay", har.path])
        for (index, request) in Self.requests.enumerated() {
            let again = try await fetch(served.url("media") + request.path, request.arguments)
            #expect(again == seen[index], "\(request)")
        }
        #expect(await served.stop() == 0)
    }

    /// mitmproxy writes a flow that failed before any answer (its upstream could not be reached) with
    /// status 0 and `"content": {}`: the whole file was refused (the content's size and type were
    /// required). Now it is read, and that request counts as not recorded.
    @Test func aHARWithMitmproxysFailedFlowIsServedAndTheFlowIsNotRecorded() async throws {
        let har = try PackagePaths.temporaryDirectory().appendingPathComponent("failed.har")
        // Port 9 (discard) listens nowhere here; lazy: mitmproxy dials it once the request has come.
        let mitmproxy = try await ListeningPeer.mitmdump(
            reverseTo: "http://127.0.0.1:9", har: har, options: ["connection_strategy=lazy"])
        let through = try await fetch(mitmproxy.url + "/photos/a.jpg", [])
        #expect(through.head.first?.hasPrefix("http/1.1 502") == true, "\(through)")
        _ = await mitmproxy.stop(SIGTERM)
        let written = try String(contentsOf: har, encoding: .utf8)
        #expect(written.contains(#""content": {}"#) && written.contains(#""status": 0"#), "\(written)")

        let served = try await ServedHarness("failed-flow", arguments: ["--replay", har.path])
        let answer = try await ChildProcess.run(
            "curl", ["--silent", "--include", served.url("media") + "/photos/a.jpg"])
        #expect(answer.standardOutput.hasPrefix("HTTP/1.1 502"), "\(answer.transcript)")
        #expect(answer.standardOutput.contains("X-PushHarness-Not-Recorded: GET /photos/a.jpg"), "\(answer.transcript)")
        #expect(await served.stop() == 0)
        #expect(
            served.process.output.contains(
                "warning: \(har.path): entry 0 (GET http://127.0.0.1:9/photos/a.jpg): the flow failed before any "
                    + "answer (status 0); it counts as not recorded"), "\(served.process.output)")
    }

    /// Chrome exports a 304 with the cached body in `content.text`: replayed, the 304 goes out without
    /// it (those bytes after the head broke the connection's framing: curl said "Excess found"), and the
    /// next request on the same connection gets its own answer.
    @Test func aChromeHARs304IsServedWithoutTheCachedBody() async throws {
        let har = PackagePaths.root.appendingPathComponent("Tests/Fuzz/cassette/chrome-304.har")
        let served = try await ServedHarness("chrome-304", arguments: ["--replay", har.path])
        let url = served.url("media") + "/photos/dailyphoto.jpg"
        let result = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--show-error", "--verbose", "--output", "/dev/null", "--write-out",
                "%{http_code} %{size_download}\n",
                "-H", #"If-None-Match: "abc""#, url, "--next", "--silent", "--output", "/dev/null", "--write-out",
                "%{http_code} %{size_download}\n", "-H", #"If-None-Match: "abc""#, url,
            ])
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput == "304 0\n304 0\n", "\(result.transcript)")
        #expect(!result.standardError.contains("Excess"), "\(result.transcript)")
        #expect(result.standardError.contains("Re-using existing connection"), "one connection: \(result.transcript)")
        #expect(await served.stop() == 0)
    }

    /// Issue 31: a cassette whose `bodies/` is a link to another folder (holding a file named like the
    /// recorded body's SHA-256) served and exported that file; a body changed after recording was served
    /// as it was. Now the link is refused naming it, a changed body is neither served nor exported, and
    /// what `harness export` writes is served back as the cassette was.
    @Test func aCassetteReachingOutsideItselfIsRefusedAndAnExportIsServedBack() async throws {
        let nginx = try await ListeningPeer.nginx(root: try root())
        let folder = try PackagePaths.temporaryDirectory()
        let cassette = folder.appendingPathComponent("cassette")
        let proxy = try await ServedHarness(
            "outside-record", arguments: ["--media-upstream", nginx.url, "--record", cassette.path])
        let direct = try await fetch(proxy.url("media") + "/photos/a.jpg", [])
        #expect(direct.body == Data(Self.photo))
        #expect(await proxy.stop() == 0)
        #expect(await nginx.stop() == 0)

        // Exported, then served from the export alone: the same answer.
        let har = folder.appendingPathComponent("export.har")
        let exported = try await HarnessCommand.run(["export", cassette.path, "-o", har.path])
        #expect(exported.status == 0, "\(exported.transcript)")
        let fromExport = try await ServedHarness("outside-export", arguments: ["--replay", har.path])
        #expect(try await fetch(fromExport.url("media") + "/photos/a.jpg", []) == direct)
        #expect(await fromExport.stop() == 0)

        // bodies/ a link to a folder outside with a file of the same name and other bytes.
        let bodies = cassette.appendingPathComponent("bodies")
        let names = try FileManager.default.contentsOfDirectory(atPath: bodies.path)
        let name = try #require(names.first { $0.count == 64 }, "\(names)")
        let outside = folder.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try Data("secret from outside the cassette".utf8).write(to: outside.appendingPathComponent(name))
        let kept = folder.appendingPathComponent("bodies-kept")
        try FileManager.default.moveItem(at: bodies, to: kept)
        try FileManager.default.createSymbolicLink(at: bodies, withDestinationURL: outside)
        let linked = "\(bodies.path): is a symbolic link"
        let serveLinked = try await HarnessCommand.run(["serve", "--ephemeral-ports", "--replay", cassette.path])
        #expect(serveLinked.status == 2, "\(serveLinked.transcript)")
        #expect(serveLinked.standardError.contains(linked), "\(serveLinked.transcript)")
        let exportLinked = try await HarnessCommand.run(["export", cassette.path, "-o", har.path])
        #expect(exportLinked.status == 2, "\(exportLinked.transcript)")
        #expect(exportLinked.standardError.contains(linked), "\(exportLinked.transcript)")
        #expect(!(try String(contentsOf: har, encoding: .utf8)).contains("c2VjcmV0"), "the earlier export is kept")

        // The body back inside, its bytes changed: neither served nor exported.
        try FileManager.default.removeItem(at: bodies)
        try FileManager.default.moveItem(at: kept, to: bodies)
        // The same size, so only its digest can tell (a size other than the recorded one is refused at open).
        try Data(Self.photo.reversed()).write(to: bodies.appendingPathComponent(name))
        let changed = try await ServedHarness("outside-changed", arguments: ["--replay", cassette.path])
        let answer = try await fetch(changed.url("media") + "/photos/a.jpg", [])
        #expect(answer.head.first?.hasPrefix("http/1.1 500") == true, "\(answer)")
        #expect(await changed.stop() == 0)
        let exportChanged = try await HarnessCommand.run(["export", cassette.path, "-o", har.path])
        #expect(exportChanged.status == 2, "\(exportChanged.transcript)")
        #expect(exportChanged.standardError.contains("not the \(name) its name says"), "\(exportChanged.transcript)")
    }

    @Test func badServeOptionsExitTwoSayingWhy() async throws {
        let folder = try PackagePaths.temporaryDirectory()
        let cases: [([String], String)] = [
            (["--replay", folder.appendingPathComponent("none").path], "there is none to replay"),
            (
                ["--cassette", folder.appendingPathComponent("none").path, "--record-mode", "none"],
                "there is none to replay"
            ),
            (
                ["--cassette", folder.path, "--record-mode", "sometimes"],
                "--record-mode takes one of once, new_episodes, none, all"
            ),
            (["--record", folder.path, "--replay", folder.path], "use one of --cassette, --record and --replay"),
            (["--media-upstream", "ftp://x"], "--media-upstream takes an http:// or https:// URL"),
            (["--match-on", "method,body"], "--match-on: 'body' is not a part of a request to match on"),
            (["--match-headers", "range,bad header"], "--match-headers: 'bad header' is not a header name"),
        ]
        for (arguments, words) in cases {
            let result = try await HarnessCommand.run(
                ["serve", "--ephemeral-ports", "--endpoints", folder.appendingPathComponent("e.json").path] + arguments)
            #expect(result.status == 2, "\(arguments): \(result.transcript)")
            #expect(result.standardError.contains(words), "\(arguments): \(result.transcript)")
        }
    }
}
