import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 32: a `Range` request against a HAR entry recorded as a whole `200` got 502 "not recorded"
/// (or, with no header compared, the whole body); a real server answers `206`. Now the range is cut
/// from the whole entry by the media server's own rules. nginx is the oracle: mitmproxy records one
/// plain GET in front of it, and every ranged request is answered from that HAR as nginx answers it.
@Suite struct ReplayedRangeTests {
    /// What is compared: the status code (each server has its own reason phrases), the headers in any
    /// order but `Accept-Ranges` (nginx leaves it off a `206`), and the body; of a `416`, only the
    /// `Content-Range` (nginx's has an HTML body of its own).
    static func comparable(_ seen: MediaCassetteProxyTests.Seen) -> MediaCassetteProxyTests.Seen {
        let status = String((seen.head.first ?? "").prefix(12))
        let unsatisfiable = status == "http/1.1 416"
        let headers = seen.head.dropFirst().filter {
            !$0.hasPrefix("accept-ranges:") && (!unsatisfiable || $0.hasPrefix("content-range:"))
        }
        return MediaCassetteProxyTests.Seen(head: [status] + headers.sorted(), body: unsatisfiable ? Data() : seen.body)
    }

    @Test func rangesOfAWholeRecordedAnswerAreServedAsNginxServesThem() async throws {
        let proxyTests = MediaCassetteProxyTests()
        let nginx = try await ListeningPeer.nginx(root: try proxyTests.root())
        let har = try PackagePaths.temporaryDirectory().appendingPathComponent("whole.har")
        let mitmproxy = try await ListeningPeer.mitmdump(reverseTo: nginx.url, har: har)
        let whole = try await proxyTests.fetch(mitmproxy.url + "/photos/a.jpg", [])
        _ = await mitmproxy.stop(SIGTERM)
        #expect(whole.body == Data(MediaCassetteProxyTests.photo), "\(whole)")
        let etag = try #require(whole.head.first { $0.hasPrefix("etag:") }).dropFirst(5)
            .trimmingCharacters(in: .whitespaces)
        // The date as nginx writes it (what `fetch` keeps is lower-cased).
        let head = try await ChildProcess.run("curl", ["--silent", "--head", nginx.url + "/photos/a.jpg"])
        let modified = try #require(
            head.standardOutput.split(separator: "\r\n").first { $0.lowercased().hasPrefix("last-modified:") }
        ).dropFirst(14).trimmingCharacters(in: .whitespaces)

        let asked: [[String]] = [
            ["--range", "1000-1999"], ["--range", "299000-"], ["--range", "-500"], ["--range", "0-0,-1"],
            ["--range", "400000-"], ["-H", "If-Range: \(etag)", "--range", "10-19"],
            ["-H", #"If-Range: "other""#, "--range", "10-19"], ["-H", "If-Range: \(modified)", "--range", "10-19"],
            ["-H", "Range: items=0-9"],
        ]
        var expected: [MediaCassetteProxyTests.Seen] = []
        for arguments in asked {
            expected.append(Self.comparable(try await proxyTests.fetch(nginx.url + "/photos/a.jpg", arguments)))
        }
        #expect(await nginx.stop() == 0)
        #expect(
            expected.map { $0.head.first ?? "" } == [
                "http/1.1 206", "http/1.1 206", "http/1.1 206", "http/1.1 206", "http/1.1 416", "http/1.1 206",
                "http/1.1 200", "http/1.1 206", "http/1.1 200",
            ])

        let served = try await ServedHarness("replayed-ranges", arguments: ["--replay", har.path])
        for (index, arguments) in asked.enumerated() {
            var seen = Self.comparable(try await proxyTests.fetch(served.url("media") + "/photos/a.jpg", arguments))
            var nginxSeen = expected[index]
            if arguments == ["--range", "0-0,-1"] {
                // Two ranges: a multipart body, each server with its own boundary.
                #expect(seen.head.first == nginxSeen.head.first)
                #expect(seen.head.contains { $0.hasPrefix("content-type: multipart/byteranges; boundary=") })
                #expect(seen.head.contains("content-length: \(seen.body.count)"), "\(seen)")
                let parts = String(decoding: seen.body, as: UTF8.self)
                #expect(parts.contains("Content-Range: bytes 0-0/300000"), "\(parts)")
                #expect(parts.contains("Content-Range: bytes 299999-299999/300000"), "\(parts)")
                seen = MediaCassetteProxyTests.Seen(head: [], body: Data())
                nginxSeen = seen
            }
            #expect(seen == nginxSeen, "\(arguments)")
        }
        #expect(await served.stop() == 0)
    }
}
