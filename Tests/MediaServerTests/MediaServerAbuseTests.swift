import Foundation
import HarnessTimeline
import MediaServer
import TestSupport
import Testing

/// Garbage, huge headers and a request trickled byte by byte get an error or a timeout, never a
/// crash, and other clients are served meanwhile.
@Suite struct MediaServerAbuseTests {
    static let script = """
        import select, socket, sys, time
        port = int(sys.argv[1])
        def exchange(data):
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.settimeout(10)
                s.sendall(data)
                try:
                    return s.recv(100).split(b"\\r\\n")[0].decode("latin-1") or "closed"
                except ConnectionResetError:
                    return "reset"
        print("garbage:", exchange(bytes(range(256)) * 4 + b"\\r\\n\\r\\n"))
        print("huge header:", exchange(b"GET /file.bin HTTP/1.1\\r\\nHost: x\\r\\nX-Big: " + b"a" * 200000 + b"\\r\\n\\r\\n"))
        # A request trickled a byte every 0.1 s, never finished: the server must give up first. The
        # pause is the abusive client's own pace, not a wait for the server; the loop ends on the
        # server's close.
        with socket.create_connection(("127.0.0.1", port)) as s:
            started = time.monotonic()
            closed = False
            try:
                for byte in b"GET /file.bin HTTP/1.1\\r\\nHost: x\\r\\nX-Slow: " + b"a" * 1000:
                    s.sendall(bytes([byte]))
                    # The next byte after 0.1 s, unless the server closes first.
                    readable, _, _ = select.select([s], [], [], 0.1)
                    if readable and s.recv(100) == b"":
                        closed = True
                        break
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            print("slowloris:", "closed after %.1f s" % (time.monotonic() - started) if closed else "still open")
        """

    @Test func abuseGetsAnErrorOrATimeoutAndOthersAreServedMeanwhile() async throws {
        let root = try PackagePaths.temporaryDirectory()
        try Data(MediaServerCurlTests.body).write(to: root.appendingPathComponent("file.bin"))
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.requestTimeout = .seconds(1)
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        async let abuse = ChildProcess.run(
            PackagePaths.python, ["-c", Self.script, "\(server.port)"], timeout: .seconds(90))
        // Served while the abuse goes on.
        let normal = try await ChildProcess.run(
            "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{http_code}", server.url + "/file.bin"])
        let report = try await abuse
        let after = try await ChildProcess.run(
            "curl", ["--silent", "--output", "/dev/null", "--write-out", "%{http_code}", server.url + "/file.bin"])
        await server.close()
        #expect(normal.standardOutput == "200")
        #expect(after.standardOutput == "200")
        let lines = report.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(report.transcript)")
        for line in lines.prefix(2) {
            let answer = line.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? ""
            #expect(answer.hasPrefix("HTTP/1.1 4") || answer == "closed" || answer == "reset", "\(line)")
        }
        #expect(lines.last?.hasPrefix("slowloris: closed after") == true, "\(report.transcript)")
        #expect(timeline.events.contains { $0.kind == .mediaRequestTimedOut })
    }

    /// At `maxConnections` a new connection is closed as it opens (it reads end-of-file at once), the
    /// limit reached is on the timeline, and the connections already open are served on.
    @Test func aConnectionOverTheLimitIsClosedAndTheOpenOnesAreServed() async throws {
        let root = try PackagePaths.temporaryDirectory()
        try Data(MediaServerCurlTests.body).write(to: root.appendingPathComponent("file.bin"))
        var configuration = MediaServerConfiguration(root: root)
        configuration.port = 0
        configuration.limits.maxConnections = 2
        let timeline = Timeline()
        let server = try await MediaServer.start(configuration: configuration, timeline: timeline)
        let script = """
            import socket, sys
            port = int(sys.argv[1])
            request = b"HEAD /file.bin HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
            def status(s):
                # A HEAD answer is its header block: read to its end, then give its status line.
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    chunk = s.recv(1000)
                    if not chunk:
                        return "closed"
                    data += chunk
                return data.split(b"\\r\\n")[0].decode()
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
            for s in held:
                s.settimeout(30)
                s.sendall(request)
                print("held:", status(s))
            third = socket.create_connection(("127.0.0.1", port))
            third.settimeout(30)
            try:
                print("third:", "closed" if third.recv(100) == b"" else "answered")
            except ConnectionResetError:
                print("third: closed")
            for s in held:
                s.sendall(request)
                print("held again:", status(s))
            """
        let report = try await ChildProcess.run(PackagePaths.python, ["-c", script, "\(server.port)"])
        await server.close()
        #expect(
            report.standardOutput.split(separator: "\n") == [
                "held: HTTP/1.1 200 OK", "held: HTTP/1.1 200 OK", "third: closed", "held again: HTTP/1.1 200 OK",
                "held again: HTTP/1.1 200 OK",
            ], "\(report.transcript)")
        let reached = timeline.events.filter { $0.kind == .serviceLimitReached }
        #expect(
            reached.count == 1 && reached.first?["service"] == "media" && reached.first?["limit"] == "2 connections")
    }
}
