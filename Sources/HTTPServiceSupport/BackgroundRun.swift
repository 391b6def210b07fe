import Logging
import ServiceLifecycle

/// One service run in a group of its own on a task of its own: for a caller with no `ServiceGroup`
/// (a test, a script). ``stop()`` shuts it down gracefully and waits for it.
public final class BackgroundRun: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(_ service: any Service, logger: Logger) {
        let group = ServiceGroup(configuration: .init(services: [service], logger: logger))
        self.group = group
        task = Task { try await group.run() }
    }

    /// Runs `service` and returns once `listening` does; if `listening` throws (the service could not
    /// bind), stops the service and throws that.
    public static func start(
        _ service: any Service, logger: Logger, listening: () async throws -> Void
    ) async throws -> BackgroundRun {
        let run = BackgroundRun(service, logger: logger)
        do {
            try await listening()
        } catch {
            await run.stop()
            throw error
        }
        return run
    }

    /// Shuts the service down gracefully and waits until its `run()` has returned.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}
