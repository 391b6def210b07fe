import Backends
import Foundation
import HarnessTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Backends under test as real child processes (small Python servers): each readiness check, the
/// fakes' endpoints in their environment, their output and ends on the timeline, a backend that ends
/// too early or too late, and the order they start and stop in.
@Suite struct BackendGroupTests {
    let folder: URL

    init() throws {
        folder = try PackagePaths.temporaryDirectory()
    }

    func python(_ name: String, _ script: String, readiness: Backend.Readiness, grace: Duration = .seconds(5))
        -> Backend
    {
        Backend(
            name: name, command: ["python3", "-u", "-c", script], workingDirectory: folder,
            environment: ["BACKEND_NAME": name], readiness: readiness, readyTimeout: .seconds(60), stopGrace: grace)
    }

    /// A server on `port` that answers `GET /ready` 503 for its first two requests, then 200.
    static func server(port: Int) -> String {
        """
        import http.server, os
        asked = 0
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                global asked
                asked += 1
                self.send_response(200 if asked > 2 else 503)
                self.end_headers()
            def log_message(self, *args):
                print("asked", asked)
        print("endpoint", os.environ["HARNESS_PARSE_URL"], "for", os.environ["BACKEND_NAME"])
        http.server.HTTPServer(("127.0.0.1", \(port)), Handler).serve_forever()
        """
    }

    @Test func eachReadinessHoldsBeforeTheNextStartsAndTheyStopInReverse() async throws {
        let timeline = Timeline()
        let (first, second) = (try ListeningPeer.freePort(), try ListeningPeer.freePort())
        let backends = [
            python("chat", Self.server(port: first), readiness: .port(first)),
            python("api", Self.server(port: second), readiness: .http(port: second, path: "/ready")),
            python(
                "worker", "print('worker: waiting for jobs'); import signal; signal.pause()",
                readiness: .line("waiting")),
        ]
        let group = try await BackendGroup.start(
            backends, environment: ["HARNESS_PARSE_URL": "http://127.0.0.1:1337/parse"], timeline: timeline)
        await group.stop()
        let events = timeline.events.filter { $0.source == "backend" }
        func index(_ kind: EventKind, _ name: String) -> Int? {
            events.firstIndex { $0.kind == kind && $0.attributes["backend"] == name }
        }
        #expect(try #require(index(.backendReady, "chat")) < #require(index(.backendStarted, "api")))
        #expect(try #require(index(.backendReady, "api")) < #require(index(.backendStarted, "worker")))
        #expect(try #require(index(.backendStopped, "worker")) < #require(index(.backendStopped, "api")))
        #expect(try #require(index(.backendStopped, "api")) < #require(index(.backendStopped, "chat")))
        let lines = events.filter { $0.kind == .backendOutput }.compactMap { $0.attributes["line"] }
        #expect(lines.contains("endpoint http://127.0.0.1:1337/parse for chat"), "\(lines)")
        // The api backend was asked until it answered 200: its third request.
        #expect(lines.contains("asked 3"), "\(lines)")
        #expect(
            events.filter { $0.kind == .backendStopped }.allSatisfy { $0.attributes["how"] == "killed by signal 15" })
    }

    @Test func oneThatExitsBeforeItIsReadyFailsWithItsLastOutputAndStopsThoseBefore() async throws {
        let timeline = Timeline()
        let backends = [
            python("db", "print('db up'); import signal; signal.pause()", readiness: .line("db up")),
            python(
                "api", "print('cannot read config.yml'); raise SystemExit(3)",
                readiness: .port(try ListeningPeer.freePort())),
        ]
        await #expect {
            _ = try await BackendGroup.start(backends, environment: [:], timeline: timeline)
        } throws: { error in
            let failure = error as? BackendGroup.Failure
            return failure?.backend == "api"
                && failure?.description.contains("exited before it was ready (exited with status 3)") == true
                && failure?.description.contains("cannot read config.yml") == true
        }
        let stopped = timeline.events.filter { $0.kind == .backendStopped }.compactMap { $0.attributes["backend"] }
        #expect(stopped == ["db"], "the backend already started is stopped")
    }

    @Test func oneThatIsNotReadyInTimeIsStoppedAndSaysWhatItWaitedFor() async throws {
        let timeline = Timeline()
        let port = try ListeningPeer.freePort()
        var backend = python("silent", "print('starting'); import signal; signal.pause()", readiness: .port(port))
        backend.readyTimeout = .seconds(1)
        await #expect {
            _ = try await BackendGroup.start([backend], environment: [:], timeline: timeline)
        } throws: { error in
            // Its output is not checked: on a busy machine Python may not have printed within the second.
            "\(error)".contains("was not ready within 1.0 seconds (waiting until port \(port) accepts connections)")
        }
        #expect(timeline.events.contains { $0.kind == .backendStopped && $0.attributes["backend"] == "silent" })
    }

    @Test func oneThatEndsWhileTheRunGoesOnIsReportedWithItsLastOutput() async throws {
        let timeline = Timeline()
        let fifo = folder.appendingPathComponent("crash")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let script = "print('ready'); open('crash').read(); print('out of memory'); raise SystemExit(1)"
        let group = try await BackendGroup.start(
            [python("api", script, readiness: .line("ready"))], environment: [:], timeline: timeline)
        async let ended = group.unexpectedEnd()
        // Writing to the FIFO lets the backend go on to its crash.
        try "go".write(to: fifo, atomically: false, encoding: .utf8)
        let failure = await ended
        await group.stop()
        #expect(failure?.description.contains("ended while the run went on (exited with status 1)") == true)
        #expect(failure?.description.contains("out of memory") == true, "\(String(describing: failure))")
    }

    @Test func oneThatIgnoresSIGTERMIsKilledAfterItsGrace() async throws {
        let timeline = Timeline()
        let script =
            "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up')\nwhile True: signal.pause()"
        let group = try await BackendGroup.start(
            [python("stubborn", script, readiness: .line("up"), grace: .milliseconds(500))], environment: [:],
            timeline: timeline)
        await group.stop()
        let stopped = timeline.events.first { $0.kind == .backendStopped }
        #expect(stopped?.attributes["how"] == "killed by signal 9")
    }

    @Test func aCommandThatCannotStartSaysWhich() async throws {
        let backend = Backend(
            name: "missing", command: ["/nonexistent/server"], workingDirectory: folder, readiness: .started)
        await #expect {
            _ = try await BackendGroup.start([backend], environment: [:], timeline: Timeline())
        } throws: { error in
            "\(error)".contains(
                "backend missing: the backend command '/nonexistent/server' cannot start (/nonexistent/server)")
        }
    }

    /// A wrapper that ends at once on SIGTERM (`sh` running a server in the background): the server it
    /// started still has the grace to end cleanly. Here it ends only once the test has seen the wrapper
    /// end and says so through a FIFO; SIGKILLed as soon as the wrapper ended, it would never write its
    /// file.
    @Test func programsABackendStartedHaveTheRestOfTheGraceAfterItEnds() async throws {
        let timeline = Timeline()
        let fifo = folder.appendingPathComponent("go")
        let marker = folder.appendingPathComponent("ended cleanly")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let child = """
            import signal, sys
            asked = []
            signal.signal(signal.SIGTERM, lambda *_: asked.append(1))
            print("child ready", flush=True)
            while not asked: signal.pause()
            open(sys.argv[1]).read(2)
            open(sys.argv[2], "w").write("yes")
            """
        let backend = Backend(
            name: "wrapped",
            command: ["sh", "-c", "python3 -c \"$0\" \"$1\" \"$2\" & wait", child, fifo.path, marker.path],
            workingDirectory: folder, readiness: .line("child ready"), readyTimeout: .seconds(60),
            stopGrace: .seconds(600))
        let group = try await BackendGroup.start([backend], environment: [:], timeline: timeline)
        let stopping = Task { await group.stop() }
        _ = try await timeline.waitFor("the wrapper's end", timeout: .seconds(600)) { $0.kind == .backendExited }
        // Read and write at once, this end never blocks, and it holds "go" for the child until it reads it.
        let go = open(fifo.path, O_RDWR)
        #expect(go >= 0 && write(go, "go", 2) == 2)
        await stopping.value
        close(go)
        #expect(FileManager.default.fileExists(atPath: marker.path), "the child was killed with its wrapper")
        let stopped = try #require(timeline.events.first { $0.kind == .backendStopped })
        #expect(stopped["how"] == "killed by signal 15", "\(stopped)")
    }
}
