import AsyncHTTPClient
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import NIOCore
import NIOPosix
import Processes

#if canImport(Glibc)
import Glibc
#endif

/// The backends of a run: started one after another in the order given, each once the one before is
/// ready; watched while the run goes on; stopped in reverse order, SIGTERM first, SIGKILL after their
/// grace, with every process each one started, in its process group or not (``BackendDescendants``).
/// Their output lines and their ends are on the timeline.
public final class BackendGroup: Sendable {
    /// A backend that could not start, was not ready in time, or ended while the run went on: its name,
    /// what happened, and the last lines it printed.
    public struct Failure: Error, CustomStringConvertible {
        public var backend: String
        public var description: String
    }

    private let running: [Running]
    private let timeline: Timeline

    private init(running: [Running], timeline: Timeline) {
        self.running = running
        self.timeline = timeline
    }

    /// Starts `backends` in order with `environment` (the fakes' endpoints) added to each one's own,
    /// and returns once every one is ready. One that fails stops those already started and throws.
    public static func start(_ backends: [Backend], environment: [String: String], timeline: Timeline) async throws
        -> BackendGroup
    {
        var started: [Running] = []
        // Before the first backend starts: an orphan of any of its processes becomes this process's child.
        if !backends.isEmpty { _ = ProcessTable.isSubreaper }
        for backend in backends {
            do {
                try Task.checkCancellation()
                let one = try Running(backend, environment: environment, timeline: timeline)
                started.append(one)
                try await one.waitUntilReady()
            } catch {
                await BackendGroup(running: started, timeline: timeline).stop()
                throw error
            }
        }
        return BackendGroup(running: started, timeline: timeline)
    }

    /// Returns when a backend ends before ``stop()``: what the run fails with. While they all run it
    /// does not return; it returns nil once they are all stopped, when the caller is cancelled, or at
    /// once for a group with no backends.
    public func unexpectedEnd() async -> Failure? {
        return await withTaskGroup(of: Failure?.self) { group in
            for one in running {
                group.addTask {
                    guard let termination = await one.termination(), !one.isStopping else { return nil }
                    // Its last lines may still be in the pipe when the end is reported.
                    await one.waitForOutputEnd()
                    return one.failure("ended while the run went on (\(termination.description))")
                }
            }
            defer { group.cancelAll() }
            for await failure in group {
                if let failure { return failure }
            }
            return nil
        }
    }

    /// Stops every backend, the last started first: SIGTERM, then SIGKILL after its grace; with it every
    /// process it started, whether or not it stayed in its process group. A backend that already ended has
    /// what it left killed at once.
    public func stop() async {
        for one in running.reversed() { await one.stop() }
    }

    /// One started backend.
    final class Running: Sendable {
        let backend: Backend
        private let process: AppProcess
        /// How the process ended, once it has; and the awaited line, once it came (or the process ended).
        private let ended = Readiness<AppProcess.Termination>()
        private let lineSeen = Readiness<Void>()
        private let stopping = LockedState(false)
        private let timeline: Timeline
        /// Every process it started, whether or not it stayed in its process group.
        private let descendants: BackendDescendants

        init(_ backend: Backend, environment: [String: String], timeline: Timeline) throws {
            self.backend = backend
            self.timeline = timeline
            let descendants = BackendDescendants(backend: backend.name)
            self.descendants = descendants
            let name = backend.name
            let (ended, lineSeen) = (self.ended, self.lineSeen)
            let awaited: String? = if case .line(let wanted) = backend.readiness { wanted } else { nil }
            do {
                // Spawned with every signal's default action (ProcessSpawning.spawn): the harness ignores
                // SIGTERM for its ServiceGroup, and SIGTERM must end a backend.
                process = try AppProcess(
                    command: backend.command, workingDirectory: backend.workingDirectory,
                    environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
                        .merging(backend.environment) { $1 }.merging(descendants.environment) { $1 },
                    kind: "backend", processGroup: true,
                    onLine: { line in
                        timeline.publish(.backendOutput, source: "backend", ["backend": name, "line": line])
                        if let awaited, line.contains(awaited) { lineSeen.succeed(()) }
                    },
                    onExit: { termination in
                        timeline.publish(
                            .backendExited, source: "backend", ["backend": name, "how": termination.description])
                        ended.succeed(termination)
                        // A line readiness still waiting learns of the end through its own check.
                        lineSeen.succeed(())
                    })
            } catch {
                throw Failure(backend: name, description: "backend \(name): \(error)")
            }
            descendants.follow(root: process.pid)
            timeline.publish(
                .backendStarted, source: "backend",
                ["backend": name, "pid": "\(process.pid)", "command": backend.command.joined(separator: " ")])
        }

        var isStopping: Bool { stopping.withLock { $0 } }

        /// Returns once the process has ended, with how it ended; nil when the caller is cancelled first.
        func termination() async -> AppProcess.Termination? { try? await ended.wait() }

        /// Waits for the backend's readiness, its end, or its time, whichever comes first.
        func waitUntilReady() async throws {
            let started = ContinuousClock.now
            let outcome: String? = await withTaskGroup(of: String?.self) { group in
                group.addTask { [self] in
                    await ready()
                    return ended.value == nil ? nil : "ended"
                }
                group.addTask { [self] in
                    guard let termination = await termination() else { return "was cancelled" }
                    return "exited before it was ready (\(termination.description))"
                }
                group.addTask { [backend] in
                    await pause(for: backend.readyTimeout)
                    return "was not ready within \(backend.readyTimeout) (waiting until \(backend.readiness))"
                }
                defer { group.cancelAll() }
                return await group.next() ?? "was cancelled"
            }
            // Cancelled while it waited: neither ready nor late, and the run is ending anyway.
            if Task.isCancelled {
                await stop()
                throw CancellationError()
            }
            if var problem = outcome {
                if problem == "ended" {
                    let how = await termination()?.description ?? "how is unknown"
                    problem = "exited before it was ready (\(how))"
                }
                await stop()
                await waitForOutputEnd()
                throw failure(problem)
            }
            // What it started so far is remembered: an orphan of it is found later even without its mark.
            _ = await descendants.look()
            timeline.publish(
                .backendReady, source: "backend",
                [
                    "backend": backend.name, "how": backend.readiness.description,
                    "after": "\(started.duration(to: .now))",
                ])
        }

        /// Returns once the readiness holds (or, for a line, once the process has ended without it).
        private func ready() async {
            switch backend.readiness {
            case .started:
                return
            case .line:
                // It fails only when the backend ends first, which the task beside this one reports.
                _ = try? await lineSeen.wait()
            case .port(let port):
                // A port opening is no event the harness can wait on: it is tried every 50 ms.
                while !Task.isCancelled, !(await Self.accepts(port: port)) {
                    await pause(for: .milliseconds(50))
                }
            case .http(let port, let path):
                while !Task.isCancelled, !(await Self.answers(port: port, path: path)) {
                    await pause(for: .milliseconds(50))
                }
            }
        }

        /// Returns once its output pipe has closed (at most a second: a child of it may hold the pipe).
        func waitForOutputEnd() async {
            await process.waitForOutputEnd(atMost: .seconds(1))
        }

        /// SIGTERM to its process group and to every other process it started, then SIGKILL to the group if
        /// it has not ended within its grace; returns once it has ended. Programs it started have the rest of
        /// the grace to end after it (a wrapper script ends at once, the server it started may take its
        /// time); what is left of them then, in its group or not, is killed and, if the harness adopted it,
        /// reaped. One that already ended has what it left killed at once. Not cancelled with the caller: a
        /// stop always waits for the end.
        func stop() async {
            // The caller's cancellation (a Ctrl-C during start) does not reach the stop's waits.
            await uncancelled { await self.stopUncancelled() }
        }

        private func stopUncancelled() async {
            stopping.withLock { $0 = true }
            guard ended.value == nil else {
                process.killProcessGroup()
                await descendants.killAll()
                return
            }
            // Looked for while it still runs, its chain of parents whole; the group has a signal of its own.
            let outsideGroup = await descendants.look().outsideGroup
            process.terminate()
            ProcessTable.signal(outsideGroup, SIGTERM)
            let grace = backend.stopGrace
            let deadline = ContinuousClock.now + grace
            let ending = await withTaskGroup(of: Void.self) { group in
                // Killed at the end of its grace, unless it ended first (the kill is cancelled then).
                group.addTask { [process] in
                    await pause(for: grace)
                    if !Task.isCancelled { process.kill() }
                }
                let ending = await termination()
                group.cancelAll()
                return ending
            }
            // No event says when the last of them ends: they are looked at every 50 ms.
            while ContinuousClock.now < deadline, await descendants.anyRunning() {
                await pause(for: .milliseconds(50))
            }
            process.killProcessGroup()
            await descendants.killAll()
            await process.waitForOutputEnd(atMost: .seconds(1))
            timeline.publish(
                .backendStopped, source: "backend", ["backend": backend.name, "how": ending?.description ?? "unknown"])
        }

        func failure(_ what: String) -> Failure {
            let lines = process.lastOutputLines
            let output =
                lines.isEmpty
                ? "it printed nothing" : "its last output:\n" + lines.map { "    " + $0 }.joined(separator: "\n")
            return Failure(backend: backend.name, description: "backend \(backend.name) \(what); \(output)")
        }

        static func accepts(port: Int) async -> Bool {
            guard (1...65_535).contains(port) else { return false }
            do {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.seconds(1))
                    .connect(host: "127.0.0.1", port: port).get()
                // The port accepted: that is the answer; the probe's connection closes on its own time.
                channel.close(promise: nil)
                return true
            } catch {
                return false
            }
        }

        /// The readiness probe's client: it reports a redirect as the 3xx it is, never follows it.
        static let probe = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

        static func answers(port: Int, path: String) async -> Bool {
            guard (1...65_535).contains(port) else { return false }
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            guard let response = try? await probe.execute(request, timeout: .seconds(2)) else {
                return false
            }
            // The status is the answer; the body is read only to end the exchange, whatever it holds.
            _ = try? await response.body.collect(upTo: 1 << 20)
            return (200..<400).contains(Int(response.status.code))
        }
    }
}
