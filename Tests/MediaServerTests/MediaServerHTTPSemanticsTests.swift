import Foundation
import HarnessTimeline
import MediaServer
import TestSupport
import Testing

/// RFC 9110's range and conditional rules with curl as the client, the access log the tutorial's
/// virtual host writes, and pipelined requests on one connection.
@Suite struct MediaServerHTTPSemanticsTests {
    static let body = MediaServerCurlTests.body
    static let path = "/photos/dailyphoto.jpg"

    /// A server over a fresh copy of the fixture, with its access log in the same folder.
    func withServer(_ test: (MediaServer, URL) async throws -> Void) async throws {
        let root = try ScenarioFixtures.mediaRoot(photo: Self.body)
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.accessLog = root.appendingPathComponent("logs/access_log")
        let server = try await MediaServer.start(configuration: configuration, timeline: Timeline())
        do {
            try await test(server, root)
        } catch {
            await server.close()
            throw error
        }
        await server.close()
    }

    func curl(_ arguments: [String]) async throws -> ChildProcess {
        try await ChildProcess.run("curl", ["--silent", "--show-error"] + arguments)
    }

    /// The status line and headers curl saw, header names lowercased.
    func head(_ server: MediaServer, _ arguments: [String]) async throws -> (status: String, headers: [String: String])
    {
        let result = try await curl(
            ["--dump-header", "-", "--output", "/dev/null"] + arguments + [server.url + Self.path])
        let lines = result.standardOutput.components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (String(lines.first?.split(separator: " ").dropFirst().first ?? ""), headers)
    }

    /// A slash after a file's name asks for a directory: 404, as Apache answers.
    @Test func aFileNameWithATrailingSlashIsNotFound() async throws {
        try await withServer { server, _ in
            let file = try await curl(["--output", "/dev/null", "--write-out", "%{http_code}", server.url + Self.path])
            let slashed = try await curl([
                "--output", "/dev/null", "--write-out", "%{http_code}", server.url + Self.path + "/",
            ])
            #expect(file.standardOutput == "200")
            #expect(slashed.standardOutput == "404")
        }
    }

    @Test func conditionalRequestsFollowRFC9110() async throws {
        try await withServer { server, _ in
            let first = try await head(server, [])
            let etag = try #require(first.headers["etag"])
            let lastModified = try #require(first.headers["last-modified"])
            #expect(first.status == "200")

            let unchanged = try await head(server, ["-H", "If-None-Match: \(etag)"])
            #expect(unchanged.status == "304")
            #expect(unchanged.headers["etag"] == etag)
            #expect(unchanged.headers["content-length"] == nil)
            #expect(try await head(server, ["-H", "If-None-Match: \"other\""]).status == "200")
            // curl's --time-cond sends If-Modified-Since.
            #expect(try await head(server, ["--time-cond", lastModified]).status == "304")
            #expect(try await head(server, ["--time-cond", "Thu, 01 Jan 1970 00:00:00 GMT"]).status == "200")
            #expect(try await head(server, ["-H", "If-Match: \"other\""]).status == "412")
            #expect(try await head(server, ["-H", "If-Match: \(etag)"]).status == "200")
            #expect(
                try await head(server, ["-H", "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT"]).status == "412")
            // If-Range with the exact Last-Modified keeps the range; any other date drops it.
            #expect(try await head(server, ["--range", "0-9", "-H", "If-Range: \(lastModified)"]).status == "206")
            #expect(
                try await head(server, ["--range", "0-9", "-H", "If-Range: Thu, 01 Jan 1970 00:00:00 GMT"]).status
                    == "200")
            #expect(try await head(server, ["--range", "0-9", "-H", "If-Range: \(etag)"]).status == "206")
            // HEAD with a Range gets the whole resource's headers: ranges are defined for GET only.
            let headRange = try await curl(["--head", "--range", "0-9", server.url + Self.path])
            #expect(headRange.standardOutput.hasPrefix("HTTP/1.1 200"))
            #expect(headRange.standardOutput.lowercased().contains("content-length: 200000"))
        }
    }

    @Test func severalRangesComeAsMultipartByteranges() async throws {
        try await withServer { server, root in
            let output = root.appendingPathComponent("multipart")
            let result = try await curl([
                "--dump-header", "-", "--output", output.path, "--range", "0-9,100000-100009,-5",
                server.url + Self.path,
            ])
            #expect(result.standardOutput.hasPrefix("HTTP/1.1 206"), "\(result.transcript)")
            let contentType = try #require(
                result.standardOutput.components(separatedBy: "\r\n").first {
                    $0.lowercased().hasPrefix("content-type:")
                })
            let boundary = try #require(contentType.components(separatedBy: "boundary=").last)
            #expect(contentType.contains("multipart/byteranges"))
            // Parse the body as a multipart reader would: each part's Content-Range and bytes.
            let body = try Data(contentsOf: output)
            var parts: [(range: String, bytes: Data)] = []
            var rest = body[...]
            let delimiter = Data("--\(boundary)".utf8)
            while let start = rest.range(of: delimiter) {
                rest = rest[start.upperBound...]
                if rest.starts(with: Data("--".utf8)) { break }
                let headerEnd = try #require(rest.range(of: Data("\r\n\r\n".utf8)))
                let headers = String(decoding: rest[..<headerEnd.lowerBound], as: UTF8.self)
                let next = try #require(rest.range(of: Data("\r\n--\(boundary)".utf8)))
                let range = try #require(
                    headers.components(separatedBy: "\r\n").first { $0.hasPrefix("Content-Range: ") })
                parts.append(
                    (
                        String(range.dropFirst("Content-Range: ".count)),
                        Data(rest[headerEnd.upperBound..<next.lowerBound])
                    ))
                rest = rest[next.lowerBound...]
            }
            #expect(
                parts.map(\.range) == ["bytes 0-9/200000", "bytes 100000-100009/200000", "bytes 199995-199999/200000"])
            #expect(
                parts.map(\.bytes) == [
                    Data(Self.body[0...9]), Data(Self.body[100_000...100_009]), Data(Self.body[199_995...]),
                ])
            let length = result.standardOutput.components(separatedBy: "\r\n").first {
                $0.lowercased().hasPrefix("content-length:")
            }
            #expect(length?.hasSuffix(" \(body.count)") == true, "Content-Length matches the multipart body")
        }
    }

    @Test func everyRequestIsInTheCombinedAccessLog() async throws {
        try await withServer { server, root in
            _ = try await curl([
                "--output", "/dev/null", "-A", "NASA TV/1.0", "-e", "http://referer.example/", server.url + Self.path,
            ])
            _ = try await curl(["--output", "/dev/null", "--range", "0-99", server.url + Self.path])
            _ = try await curl(["--output", "/dev/null", server.url + "/missing.jpg"])
            _ = try await curl(["--output", "/dev/null", "-A", "evil\" 200 1 \"x", server.url + "/a%22b"])
            await server.close()
            let lines = try String(contentsOf: root.appendingPathComponent("logs/access_log"), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(lines)")
            let combined =
                /^127\.0\.0\.1 - - \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "([^"\\]|\\.)*" \d{3} (\d+|-) "([^"\\]|\\.)*" "([^"\\]|\\.)*"$/
            for line in lines { #expect(line.wholeMatch(of: combined) != nil, "\(line)") }
            #expect(
                lines[0].hasSuffix(
                    #""GET /photos/dailyphoto.jpg HTTP/1.1" 200 200000 "http://referer.example/" "NASA TV/1.0""#))
            #expect(lines[1].contains(#"" 206 100 "-" "curl/"#))
            #expect(lines[2].contains(#""GET /missing.jpg HTTP/1.1" 404 "#))
            #expect(lines[3].hasSuffix(#""evil\" 200 1 \"x""#), "a quote in a header cannot forge fields: \(lines[3])")
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        try await withServer { server, _ in
            let script = """
                import socket, sys
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                request = lambda r: ("GET /photos/dailyphoto.jpg HTTP/1.1\\r\\nHost: x\\r\\nRange: bytes=%s\\r\\n\\r\\n" % r).encode()
                # Several ranges are answered on the connection's task, single ones on the event loop:
                # the order must hold across both.
                s.sendall(request("0-1,3-4") + request("0-4") + request("10-14") + b"HEAD /photos/dailyphoto.jpg HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                sys.stdout.write(data.decode("latin-1"))
                """
            let result = try await ChildProcess.run(PackagePaths.python, ["-c", script, "\(server.port)"])
            // Bodies are binary and end where the next status line starts, with no line break between.
            let statuses = result.standardOutput.matches(of: /HTTP\/1\.1 \d{3} [A-Za-z ]+\r\n/).map {
                String(result.standardOutput[$0.range].dropLast())  // "\r\n" is one Character
            }
            #expect(
                statuses == [
                    "HTTP/1.1 206 Partial Content", "HTTP/1.1 206 Partial Content", "HTTP/1.1 206 Partial Content",
                    "HTTP/1.1 200 OK",
                ], "\(result.transcript)")
            let multipart = try #require(result.standardOutput.range(of: "multipart/byteranges"))
            #expect(result.standardOutput.contains("Content-Range: bytes 0-4/200000"))
            #expect(result.standardOutput.contains("Content-Range: bytes 10-14/200000"))
            let first = try #require(result.standardOutput.range(of: "bytes 0-4/"))
            let second = try #require(result.standardOutput.range(of: "bytes 10-14/"))
            #expect(multipart.lowerBound < first.lowerBound && first.lowerBound < second.lowerBound)
        }
    }
}

/// The rates and delays over real sockets. Only lower bounds: a busy machine can make a transfer
/// slower, never faster; accuracy is measured in bench/, not here.
@Suite struct MediaServerPacingTests {
    func withServer(_ settings: MediaServerSettings, _ test: (MediaServer) async throws -> Void) async throws {
        let root = try PackagePaths.temporaryDirectory()
        try Data(MediaServerCurlTests.body).write(to: root.appendingPathComponent("file.bin"))
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.settings = settings
        let server = try await MediaServer.start(configuration: configuration, timeline: Timeline())
        do {
            try await test(server)
        } catch {
            await server.close()
            throw error
        }
        await server.close()
    }

    @Test func theFirstByteWaitsForTheThinkTimeAndTheLatency() async throws {
        var settings = MediaServerSettings()
        settings.firstByteDelayMilliseconds = 300
        settings.latencyMilliseconds = 200
        try await withServer(settings) { server in
            let result = try await ChildProcess.run(
                "curl",
                ["--silent", "--output", "/dev/null", "--write-out", "%{time_starttransfer}", server.url + "/file.bin"])
            #expect(try #require(Double(result.standardOutput)) >= 0.5, "\(result.transcript)")
        }
    }

    @Test func aServerWideRateIsSharedByEveryConnection() async throws {
        var settings = MediaServerSettings()
        settings.serverBytesPerSecond = 400_000
        try await withServer(settings) { server in
            // Two downloads of 200,000 bytes at once: alone each would take half a second at this rate;
            // sharing it, the pair needs a whole one.
            async let first = ChildProcess.run(
                "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{time_total}", server.url + "/file.bin"])
            async let second = ChildProcess.run(
                "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{time_total}", server.url + "/file.bin"])
            let times = try await [first, second].map { try #require(Double($0.standardOutput)) }
            #expect(times.max()! >= 0.9, "\(times)")
        }
    }
}
