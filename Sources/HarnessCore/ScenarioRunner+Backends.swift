import Backends
import Foundation
import HarnessTimeline
import NIOPosix
import Recording

extension ScenarioRunner {
    /// Starts the backends `scenario` names, in its order, each once the one before is ready, with the
    /// services' endpoints in their environment and in `endpoints.json` of the run's state; then tells
    /// the apps their URLs. Nil when it names none. The ports chosen for them are added to `ports`, for
    /// the caller to release when the run ends.
    ///
    /// Recording, the apps reach each backend with a port through a ``BackendDoor`` that records their
    /// exchanges; replaying ``withoutBackend``, that backend is not started and a door with a
    /// ``BackendStandIn`` takes its place. The doors are returned to be run beside the steps.
    func startBackends(
        of scenario: Scenario, stack: ServiceStack, state: URL, timeline: Timeline, recorder: CassetteRecorder?,
        output: @escaping @Sendable (String) -> Void, ports: inout [Int]
    ) async throws -> (group: BackendGroup?, doors: [BackendDoor]) {
        guard !scenario.backends.isEmpty else { return (nil, []) }
        var configurations = scenario.backends.compactMap { configuration.backend(named: $0) }
        var doors: [BackendDoor] = []
        if let withoutBackend, let replaying {
            let recorded = try await NIOThreadPool.singleton.runIfActive { try replaying.timeline() }
            let standIn = BackendStandIn(
                name: withoutBackend, cassette: replaying, recorded: recorded, matching: matching, timeline: timeline,
                stack: stack, output: output)
            doors.append(try await BackendDoor.open(name: withoutBackend, mode: .standIn(standIn)))
            configurations.removeAll { $0.name == withoutBackend }
            timeline.publish(
                .backendReady, source: "backend",
                ["backend": withoutBackend, "how": BackendStandIn.readiness, "after": "0 seconds"])
        }
        // What was opened or started is closed again when a later part cannot be.
        var group: BackendGroup?
        do {
            return try await launch()
        } catch {
            for door in doors { await door.close() }
            if let group { await group.stop() }
            throw error
        }

        func launch() async throws -> (group: BackendGroup?, doors: [BackendDoor]) {
            var chosen: [String: Int] = [:]
            for backend in configurations {
                switch backend.port {
                case .fixed(let port):
                    chosen[backend.name] = port
                case .free:
                    let port = try FreePorts.shared.take()
                    ports.append(port)
                    chosen[backend.name] = port
                case nil:
                    break
                }
            }
            let topic = scenario.launchedApp.flatMap { configuration.apps[$0]?.bundleId } ?? ""
            let endpoints = Endpoints(stack: stack, parse: configuration.services.parse, topic: topic)
            let file = state.appendingPathComponent("endpoints.json")
            try endpoints.write(to: file)
            var variables = endpoints.environment
            variables["HARNESS_ENDPOINTS_FILE"] = file.path
            // A stand-in's URL is the backend's for the others too.
            for door in doors {
                if let standing = configuration.backend(named: door.name) { variables[standing.urlVariable] = door.url }
            }
            let folders = state.appendingPathComponent("backends")
            for backend in configurations {
                try FileManager.default.createDirectory(
                    at: folders.appendingPathComponent(backend.name), withIntermediateDirectories: true)
            }
            let plan = try BackendLaunchPlan(
                configurations, ports: chosen, endpoints: variables, inherited: ProcessInfo.processInfo.environment,
                baseDirectory: baseDirectory, dataDirectory: { folders.appendingPathComponent($0) })
            var apps = plan.appEnvironment
            for door in doors {
                if let standing = configuration.backend(named: door.name) { apps[standing.urlVariable] = door.url }
            }
            if !plan.backends.isEmpty {
                group = try await BackendGroup.start(plan.backends, environment: [:], timeline: timeline)
            }
            if let recorder {
                // Recorded, the apps reach each backend through a door that keeps what they exchanged.
                for backend in configurations {
                    guard let port = chosen[backend.name] else { continue }
                    let door = try await BackendDoor.open(
                        name: backend.name, mode: .forward(port: port, recorder: recorder))
                    doors.append(door)
                    apps[backend.urlVariable] = door.url
                }
            }
            for device in stack.devices {
                await device.simulator.setAppEnvironment(stack.appEnvironment.merging(apps) { $1 })
            }
            return (group, doors)
        }
    }

    /// Runs `work` while the backends run: one that ends first fails the run with its last output. The
    /// doors to them serve until `work` is done.
    func watching<Value: Sendable>(
        _ backends: BackendGroup?, doors: [BackendDoor] = [], _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        guard backends != nil || !doors.isEmpty else { return try await work() }
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await work() }
            if let backends {
                group.addTask {
                    if let failure = await backends.unexpectedEnd() {
                        throw StepFailure.backendEnded(failure)
                    }
                    return nil
                }
            }
            for door in doors {
                // Serves until cancelled with the rest, once the work is done.
                group.addTask {
                    await door.run()
                    return nil
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }
}
