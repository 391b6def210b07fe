import Foundation
import HarnessTimeline
import MediaServer
import TestSupport
import Testing

/// The media server over real sockets, with curl as the client.
@Suite struct MediaServerCurlTests {
    static let body: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    func startServer(throttle: Int? = nil) async throws -> (MediaServer, URL) {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.throttleBytesPerSecond = throttle
        return (try await MediaServer.start(configuration: configuration, timeline: Timeline()), root)
    }

    func curl(_ arguments: [String]) async throws -> ChildProcess {
        try await ChildProcess.run("curl", ["--silent", "--show-error"] + arguments)
    }

    @Test func getServesTheWholeFileWithValidators() async throws {
        let (server, root) = try await startServer()
        let output = root.appendingPathComponent("out")
        let result = try await curl([
            "--dump-header", "-", "--output", output.path, server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 200"))
        let headers = result.standardOutput.lowercased()
        #expect(headers.contains("accept-ranges: bytes"))
        #expect(headers.contains("content-length: 200000"))
        #expect(headers.contains("content-type: image/jpeg"))
        #expect(headers.contains("etag: \""))
        #expect(headers.contains("last-modified: "))
        #expect(try Data(contentsOf: output) == Data(Self.body))
    }

    @Test func headSendsHeadersOnly() async throws {
        let (server, _) = try await startServer()
        let result = try await curl(["--head", server.url + "/photos/dailyphoto.jpg"])
        await server.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 200"))
        #expect(result.standardOutput.lowercased().contains("content-length: 200000"))
    }

    @Test func aRangeGives206WithContentRange() async throws {
        let (server, root) = try await startServer()
        let output = root.appendingPathComponent("part")
        let result = try await curl([
            "--dump-header", "-", "--output", output.path, "--range", "100-109", server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 206"))
        #expect(result.standardOutput.lowercased().contains("content-range: bytes 100-109/200000"))
        #expect(try Data(contentsOf: output) == Data(Self.body[100...109]))
    }

    @Test func anUnsatisfiableRangeGives416WithTheLength() async throws {
        let (server, _) = try await startServer()
        let result = try await curl([
            "--dump-header", "-", "--output", "/dev/null", "--range", "300000-", server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 416"))
        #expect(result.standardOutput.lowercased().contains("content-range: bytes */200000"))
    }

    @Test func curlResumesAPartialDownloadToAnIdenticalFile() async throws {
        let (server, root) = try await startServer()
        let output = root.appendingPathComponent("resumed")
        try Data(Self.body[0..<123_456]).write(to: output)
        let result = try await curl([
            "--continue-at", "-", "--output", output.path, server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.status == 0, "\(result.transcript)")
        #expect(try Data(contentsOf: output) == Data(Self.body))
    }

    @Test func ifRangeWithAStaleValidatorGetsTheWholeBody() async throws {
        let (server, _) = try await startServer()
        let result = try await curl([
            "--dump-header", "-", "--output", "/dev/null", "--range", "0-9", "-H", "If-Range: \"stale\"",
            server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.standardOutput.hasPrefix("HTTP/1.1 200"))
    }

    @Test(arguments: ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/photos/missing.jpg"])
    func pathsOutsideTheRootOrMissingAre404(path: String) async throws {
        let (server, _) = try await startServer()
        let result = try await curl([
            "--path-as-is", "--output", "/dev/null", "--write-out", "%{http_code}", server.url + path,
        ])
        await server.close()
        #expect(result.standardOutput == "404")
    }

    /// Only a lower bound: a busy machine can make a download slower, never faster. Accuracy is
    /// measured in bench/, not here.
    @Test func aThrottledDownloadTakesAtLeastItsSizeOverTheRateAndDeliversEveryByte() async throws {
        let (server, root) = try await startServer(throttle: 400_000)
        let output = root.appendingPathComponent("throttled")
        let result = try await curl([
            "--output", output.path, "--write-out", "%{time_total}", server.url + "/photos/dailyphoto.jpg",
        ])
        await server.close()
        #expect(result.status == 0)
        #expect(try Data(contentsOf: output) == Data(Self.body))
        // 200 000 bytes at 400 000 B/s: the last chunk is due after 0.5 s less one chunk's time.
        #expect(try #require(Double(result.standardOutput)) >= 0.45, "\(result.transcript)")
    }
}

@Suite struct MediaControlAPITests {
    @Test func theThrottleCanBeReadAndChangedAtRunTime() async throws {
        let root = try PackagePaths.temporaryDirectory()
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.throttleBytesPerSecond = 50_000
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        let before = try await ChildProcess.run("curl", ["--silent", server.controlURL + "/settings"])
        let changed = try await ChildProcess.run(
            "curl",
            ["--silent", "-X", "PUT", "--data", #"{"throttleBytesPerSecond":8000}"#, server.controlURL + "/settings"])
        let refused = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--write-out", "\n%{http_code}", "-X", "PUT", "--data", #"{"throttleBytesPerSecond":-1}"#,
                server.controlURL + "/settings",
            ])
        let after = try await ChildProcess.run("curl", ["--silent", server.controlURL + "/settings"])
        await server.close()
        func settings(_ text: String) throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        #expect(try settings(before.standardOutput)["throttleBytesPerSecond"] as? Int == 50_000)
        #expect(try settings(before.standardOutput)["serverBytesPerSecond"] is NSNull, "every setting is shown")
        #expect(try settings(changed.standardOutput)["throttleBytesPerSecond"] as? Int == 8000)
        #expect(refused.standardOutput.hasSuffix("\n400"))
        #expect(refused.standardOutput.contains("throttleBytesPerSecond must be between 1 and"))
        #expect(try settings(after.standardOutput)["throttleBytesPerSecond"] as? Int == 8000)
        #expect(timeline.events.contains { $0.kind == "media.settings.changed" && $0["throttle"] == "8000 B/s" })
    }
}
