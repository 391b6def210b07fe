import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// harness.yml's `backends`, run by the built `harness` as a user runs it: a Python server started
/// before the app with the fakes' endpoints, reached by the app, stopped with its children.
@Suite struct BackendRunTests {
    static let fixtures = PackagePaths.root.appendingPathComponent("Tests/BackendFixtures")

    /// A scenario file with the backend `api` (run in `mode`) and the app `client` that asks it for /hello;
    /// `then` adds a step after the launch.
    func configuration(mode: String, then step: String = "", grace: String = "1s", _ name: String = #function)
        throws -> URL
    {
        let backend = Self.fixtures.appendingPathComponent("api_backend.py").path
        let app = Self.fixtures.appendingPathComponent("backend_client_app.py").path
        return try ScenarioFixtures.writeConfiguration(
            """
            version: 1
            services:
              apns: {port: 0}
              media: {port: 0, root: \(ScenarioFixtures.media)}
              parse: {port: 0}
            apps:
              client:
                bundleId: com.example.client
                command: [python3, \(app)]
                backgroundModes: [remote-notification]
            backends:
              api:
                command: [python3, \(backend), \(mode)]
                port: free
                ready: {http: /health}
                readyTimeout: 60s
                stopGrace: \(grace)
                environment: {GREETING: "api on port ${HARNESS_PORT}"}
            scenarios:
              talk:
                backends: [api]
                steps:
                  - launch: client
                  \(step)
                expect:
                  # Output lines come through a pipe: when they reach the timeline, against the probe's
                  # backend.ready, is not theirs to say.
                  eventually:
                    - backend.output: {line: {contains: "endpoints match"}}
                    - backend.output: {line: {contains: "parse answered 200"}}
                  chain:
                    - backend.ready: {backend: api}
                    - device.app.launched
                    - app.log: {message: {contains: "backend said: hello from api on port"}}
            """, name)
    }

    /// Runs the scenario with the backend in `mode`; the result and the report folder.
    func run(mode: String, _ name: String = #function) async throws -> (ChildProcess, reports: URL) {
        let file = try configuration(mode: mode, name)
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let result = try await HarnessCommand.run(["run", "talk", "--config", file.path, "--report-dir", reports.path])
        return (result, reports)
    }

    func events(in reports: URL) throws -> [[String: Any]] {
        try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
            .split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func attributes(_ event: [String: Any]) -> [String: String] { event["attributes"] as? [String: String] ?? [:] }

    /// Alive and not a zombie waiting for its parent (or init) to reap it.
    func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        // Gone between the two looks (reaped): not alive.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let state = stat.split(separator: ")").last?.split(separator: " ").first
        else { return false }
        return state != "Z"
    }

    @Test func aBackendStartsBeforeTheAppWithTheEndpointsAndTheAppReachesIt() async throws {
        let (result, reports) = try await run(mode: "serve")
        #expect(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutput.contains("PASS talk"), "\(result.transcript)")
        let events = try events(in: reports)
        let kinds = events.compactMap { $0["kind"] as? String }
        // Stopped before the services: its stop comes before the run's end, with SIGTERM.
        let stopped = try #require(events.first { $0["kind"] as? String == "backend.stopped" })
        #expect(attributes(stopped)["how"] == "killed by signal 15", "\(stopped)")
        let ready = try #require(kinds.firstIndex(of: "backend.ready"))
        let launched = try #require(kinds.firstIndex(of: "device.app.launched"))
        #expect(ready < launched)
        // At the end the app goes first: nothing of it happens while the backend takes its time to stop.
        let exited = try #require(kinds.lastIndex(of: "device.app.exited"))
        let stoppedAt = try #require(kinds.firstIndex(of: "backend.stopped"))
        #expect(exited < stoppedAt, "\(kinds)")
        let endpointsFile = reports.appendingPathComponent("state/endpoints.json")
        let endpoints = try Data(contentsOf: endpointsFile)
        // It holds the master key: readable by its owner only, as the keys and certificates are.
        let permissions = try FileManager.default.attributesOfItem(atPath: endpointsFile.path)[.posixPermissions]
        #expect((permissions as? NSNumber)?.intValue == 0o600)
        let parse = try #require((try JSONSerialization.jsonObject(with: endpoints) as? [String: Any])?["parse"])
        #expect((parse as? [String: Any])?["masterKey"] as? String == "nasa-tv-master-key")
    }

    @Test func aBackendThatDiesDuringTheRunFailsItWithItsLastOutput() async throws {
        let (result, _) = try await run(mode: "dies-on-hello")
        #expect(result.status == 1, "\(result.transcript)")
        #expect(result.standardOutput.contains("FAIL talk"), "\(result.transcript)")
        #expect(
            result.standardOutput.contains("backend api ended while the run went on (exited with status 3)"),
            "\(result.transcript)")
        #expect(result.standardOutput.contains("    about to fall over"), "\(result.transcript)")
    }

    @Test func aBackendThatEndsBeforeItIsReadyFailsTheRunBeforeAnyAppStarts() async throws {
        let (result, reports) = try await run(mode: "exit-before-ready")
        #expect(result.status == 1, "\(result.transcript)")
        #expect(
            result.standardOutput.contains("backend api exited before it was ready (exited with status 2)"),
            "\(result.transcript)")
        #expect(result.standardOutput.contains("    giving up before listening"), "\(result.transcript)")
        let kinds = try events(in: reports).compactMap { $0["kind"] as? String }
        #expect(!kinds.contains("device.app.launched"), "\(kinds)")
    }

    /// Ctrl-C during the run: the backend and the child it started (which ignores SIGTERM) both end, the
    /// child in the backend's process group or in a session of its own (setsid).
    @Test(arguments: ["with-child", "with-setsid-child"])
    func ctrlCLeavesNoBackendProcessBehindNorAnyItStarted(_ mode: String) async throws {
        // The run waits for a message the app never logs, until Ctrl-C.
        let file = try configuration(
            mode: mode, then: "- waitFor: {event: app.log, where: {message: never logged}, timeout: 10m}",
            "ctrlC-\(mode)")
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let run = try RunningChild(
            HarnessCommand.path, ["run", "talk", "--config", file.path, "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        let child = try #require(await run.waitForLine(containing: "line=child pid "), "\(run.output)")
        let backend = try #require(await run.waitForLine(containing: " listening on "), "\(run.output)")
        _ = try #require(await run.waitForLine(containing: "backend said"), "\(run.output)")
        func pid(after marker: String, in line: String) -> Int32? {
            line.components(separatedBy: marker).last?.split(separator: " ").first.flatMap { Int32($0) }
        }
        let childPid = try #require(pid(after: "child pid ", in: child))
        let backendPid = try #require(pid(after: "line=pid ", in: backend))
        #expect(isAlive(childPid) && isAlive(backendPid))
        run.send(SIGINT)
        let status = await run.waitForExit()
        #expect(status == 130, "\(run.output)")
        #expect(!isAlive(backendPid), "the backend \(backendPid) outlived the run")
        #expect(!isAlive(childPid), "the backend's child \(childPid) outlived the run")
    }

    /// Issue 31: a child that called setsid outlived every run (50 of 50). At a normal end it is gone.
    @Test func aChildThatCalledSetsidDoesNotOutliveARunThatPasses() async throws {
        let file = try configuration(mode: "with-setsid-child")
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let result = try await HarnessCommand.run(["run", "talk", "--config", file.path, "--report-dir", reports.path])
        #expect(result.status == 0, "\(result.transcript)")
        let line = try #require(result.standardOutput.split(separator: "\n").first { $0.contains("line=child pid ") })
        let childPid = try #require(
            line.components(separatedBy: "child pid ").last?.split(separator: " ").first.flatMap { Int32($0) })
        #expect(!isAlive(childPid), "the backend's setsid child \(childPid) outlived the run")
    }

    /// A second Ctrl-C exits at once: the backend, in a process group of its own that the terminal's
    /// signal does not reach, is killed on the way out, though it ignores SIGTERM and has ten minutes.
    @Test func aSecondCtrlCStillKillsTheBackend() async throws {
        let file = try configuration(
            mode: "ignores-sigterm", then: "- waitFor: {event: app.log, where: {message: never logged}, timeout: 10m}",
            grace: "10m")
        let reports = file.deletingLastPathComponent().appendingPathComponent("report")
        let run = try RunningChild(
            HarnessCommand.path, ["run", "talk", "--config", file.path, "--report-dir", reports.path],
            currentDirectory: PackagePaths.root)
        let backend = try #require(await run.waitForLine(containing: " listening on "), "\(run.output)")
        _ = try #require(await run.waitForLine(containing: "backend said"), "\(run.output)")
        let pid = try #require(
            backend.components(separatedBy: "line=pid ").last?.split(separator: " ").first.flatMap { Int32($0) })
        run.send(SIGINT)
        _ = try #require(await run.waitForLine(containing: "interrupted, stopping"), "\(run.output)")
        #expect(isAlive(pid), "the backend ignores SIGTERM: it is still there after the first Ctrl-C")
        run.send(SIGINT)
        let status = await run.waitForExit()
        #expect(status == 130, "\(run.output)")
        #expect(!isAlive(pid), "the backend \(pid) outlived the harness")
    }
}
