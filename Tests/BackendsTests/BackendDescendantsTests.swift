import Backends
import Foundation
import HarnessTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Backends whose processes leave the backend's process group (`setsid`, a double fork): none of them
/// outlives the group's stop, whether the backend is stopped, ends on its own, or its start is cancelled
/// (Ctrl-C). Real Python processes; each writes the pid of the process that left its group to a file
/// before it prints the line that makes it ready, so the file is there once the group has started.
@Suite struct BackendDescendantsTests {
    let folder: URL

    init() throws {
        folder = try PackagePaths.temporaryDirectory()
    }

    /// Forks a child that calls `setsid` and ignores SIGTERM; once it has, writes its pid to the file
    /// `argv[1]`. The child's parent is the backend until the backend ends.
    static let setsidChild = """
        import os, signal, sys
        r, w = os.pipe()
        child = os.fork()
        if child == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            os.write(w, b"x")
            while True: signal.pause()
        os.read(r, 1)
        open(sys.argv[1], "w").write(str(child))
        """

    /// A daemon's double fork: a child calls `setsid` and forks a grandchild that ignores SIGTERM, then
    /// ends; the grandchild's pid goes to the file `argv[1]` once the child has been reaped, so the
    /// grandchild's parent is gone (the harness adopted it) and its group and session are its own: only
    /// its environment says whose it is.
    static let daemon = """
        import os, signal, sys
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.write(w, str(os.getpid()).encode())
                while True: signal.pause()
            os._exit(0)
        os.close(w)
        grandchild = os.read(r, 32).decode()
        os.wait()
        open(sys.argv[1], "w").write(grandchild)
        """

    func backend(
        _ name: String, _ script: String, then rest: String, readiness: Backend.Readiness = .line("ready"),
        grace: Duration = .milliseconds(500)
    ) -> Backend {
        Backend(
            name: name, command: ["python3", "-u", "-c", script + "\n" + rest, name], workingDirectory: folder,
            readiness: readiness, readyTimeout: .seconds(60), stopGrace: grace)
    }

    static let readyThenWait = "print('ready')\nwhile True: signal.pause()\n"

    /// The pid the backend `name` wrote.
    func descendant(of name: String) throws -> Int32 {
        let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        return try #require(Int32(text), "backend \(name) wrote '\(text)'")
    }

    /// Alive, and not a zombie waiting to be reaped.
    func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // Gone between the two looks (reaped): not running.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let state = stat.split(separator: ")").last?.split(separator: " ").first
        else { return false }
        return state != "Z"
    }

    /// Gone altogether: ended and reaped (a zombie still answers `kill(pid, 0)`).
    func isGone(_ pid: Int32) -> Bool {
        kill(pid, 0) == -1 && errno == ESRCH
    }

    @Test func aChildThatCalledSetsidIsKilledWithItsBackend() async throws {
        let timeline = Timeline()
        let group = try await BackendGroup.start(
            [backend("api", Self.setsidChild, then: Self.readyThenWait)], environment: [:], timeline: timeline)
        let child = try descendant(of: "api")
        #expect(isRunning(child))
        await group.stop()
        #expect(isGone(child), "the backend's child \(child), in a session of its own, outlived the stop")
        let stopped = try #require(timeline.events.first { $0.kind == .backendStopped })
        #expect(stopped["how"] == "killed by signal 15", "\(stopped)")
    }

    @Test func aDaemonsDoubleForkIsKilledWhenTheBackendIsStopped() async throws {
        let group = try await BackendGroup.start(
            [backend("db", Self.daemon, then: Self.readyThenWait)], environment: [:], timeline: Timeline())
        let daemon = try descendant(of: "db")
        #expect(isRunning(daemon))
        await group.stop()
        #expect(isGone(daemon), "the daemon \(daemon) the backend started outlived the stop")
    }

    /// A descendant that handles SIGTERM gets it with the backend's, and the grace to end on its own.
    @Test func aSetsidDescendantGetsSIGTERMAndTheGraceFirst() async throws {
        let marker = folder.appendingPathComponent("ended cleanly")
        let cleanChild = """
            import os, signal, sys
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                os.setsid()
                def end(*_):
                    open("ended cleanly", "w").write("yes")
                    os._exit(0)
                signal.signal(signal.SIGTERM, end)
                os.write(w, b"x")
                while True: signal.pause()
            os.read(r, 1)
            open(sys.argv[1], "w").write(str(child))
            """
        let group = try await BackendGroup.start(
            [backend("worker", cleanChild, then: Self.readyThenWait, grace: .seconds(60))], environment: [:],
            timeline: Timeline())
        let child = try descendant(of: "worker")
        await group.stop()
        #expect(FileManager.default.fileExists(atPath: marker.path), "the child got SIGKILL without SIGTERM first")
        #expect(isGone(child))
    }

    /// The backend crashes during the run: the daemon it started outlives it until the group is stopped,
    /// as the run does at once.
    @Test func aDaemonOfABackendThatEndedOnItsOwnIsKilledAtTheStop() async throws {
        let fifo = folder.appendingPathComponent("crash")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let group = try await BackendGroup.start(
            [backend("api", Self.daemon, then: "print('ready')\nopen('crash').read()\nraise SystemExit(1)\n")],
            environment: [:], timeline: Timeline())
        let daemon = try descendant(of: "api")
        async let ended = group.unexpectedEnd()
        try "go".write(to: fifo, atomically: false, encoding: .utf8)
        let failure = await ended
        #expect(failure?.description.contains("exited with status 1") == true, "\(String(describing: failure))")
        #expect(isRunning(daemon), "the daemon outlives its backend's own end")
        await group.stop()
        #expect(isGone(daemon), "the daemon \(daemon) of a backend that ended outlived the stop")
    }

    /// Ctrl-C while a backend is starting cancels the start: what it started goes with it.
    @Test func aCancelledStartLeavesNoDescendantBehind() async throws {
        let timeline = Timeline()
        let starting = Task {
            try await BackendGroup.start(
                [backend("slow", Self.daemon, then: Self.readyThenWait, readiness: .line("never printed"))],
                environment: [:], timeline: timeline)
        }
        _ = try await timeline.waitFor("the backend's line 'ready'", timeout: .seconds(60)) {
            $0.kind == .backendOutput && $0["line"] == "ready"
        }
        let daemon = try descendant(of: "slow")
        starting.cancel()
        await #expect(throws: CancellationError.self) { try await starting.value }
        #expect(isGone(daemon), "the daemon \(daemon) outlived a cancelled start")
    }

    /// Two groups in one process (`--parallel`, the tests): stopping one leaves the other's daemon alone.
    @Test func stoppingOneGroupLeavesAnothersDescendantsAlone() async throws {
        let first = try await BackendGroup.start(
            [backend("one", Self.daemon, then: Self.readyThenWait)], environment: [:], timeline: Timeline())
        let second = try await BackendGroup.start(
            [backend("two", Self.daemon, then: Self.readyThenWait)], environment: [:], timeline: Timeline())
        let mine = try descendant(of: "one")
        let theirs = try descendant(of: "two")
        await first.stop()
        #expect(isGone(mine))
        #expect(isRunning(theirs), "the other group's daemon was killed")
        await second.stop()
        #expect(isGone(theirs))
    }
}
