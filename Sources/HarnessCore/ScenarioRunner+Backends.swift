import Backends
import Foundation
import HarnessTimeline

extension ScenarioRunner {
    /// Starts the backends `scenario` names, in its order, each once the one before is ready, with the
    /// services' endpoints in their environment and in `endpoints.json` of the run's state; then tells
    /// the apps their URLs. Nil when it names none. The ports chosen for them are added to `ports`, for
    /// the caller to release when the run ends.
    func startBackends(
        of scenario: Scenario, stack: ServiceStack, state: URL, timeline: Timeline, ports: inout [Int]
    ) async throws -> BackendGroup? {
        guard !scenario.backends.isEmpty else { return nil }
        let configurations = scenario.backends.compactMap { configuration.backend(named: $0) }
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
        let folders = state.appendingPathComponent("backends")
        for backend in configurations {
            try FileManager.default.createDirectory(
                at: folders.appendingPathComponent(backend.name), withIntermediateDirectories: true)
        }
        let plan = try BackendLaunchPlan(
            configurations, ports: chosen, endpoints: variables, inherited: ProcessInfo.processInfo.environment,
            baseDirectory: baseDirectory, dataDirectory: { folders.appendingPathComponent($0) })
        let group = try await BackendGroup.start(plan.backends, environment: [:], timeline: timeline)
        for device in stack.devices {
            await device.simulator.setAppEnvironment(stack.appEnvironment.merging(plan.appEnvironment) { $1 })
        }
        return group
    }

    /// Runs `work` while the backends run: one that ends first fails the run with its last output.
    func watching<Value: Sendable>(
        _ backends: BackendGroup?, _ work: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        guard let backends else { return try await work() }
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                if let failure = await backends.unexpectedEnd() { throw StepFailure(message: failure.description) }
                return nil
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let value = next { return value }
            }
            throw CancellationError()
        }
    }
}
