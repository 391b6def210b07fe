import Foundation
import HarnessTimeline
import Logging
import TestSupport
import Testing

@testable import HarnessCore

/// The stack's services run in one group: a run that needs them learns at once when they stop.
@Suite struct ServiceStackTests {
    func start(_ timeline: Timeline) async throws -> ServiceStack {
        var services = ServicesConfiguration(baseDirectory: PackagePaths.root)
        services.useEphemeralPorts()
        return try await ServiceStack.start(
            services: services, stateDirectory: try PackagePaths.temporaryDirectory(), timeline: timeline,
            logger: Logger(label: "test"))
    }

    @Test func workWhileTheServicesRunGetsItsValue() async throws {
        let stack = try await start(Timeline())
        let value = try await stack.whileRunning { 42 }
        await stack.stop()
        #expect(value == 42)
    }

    @Test func workIsStoppedWhenTheServicesStopFirst() async throws {
        let stack = try await start(Timeline())
        let work = Task {
            try await stack.whileRunning {
                // Work that only cancellation ends: a stream nobody ever yields to.
                let (never, continuation) = AsyncStream.makeStream(of: Void.self)
                for await _ in never {}
                continuation.finish()
                try Task.checkCancellation()
                return 0
            }
        }
        await stack.stop()
        let error = await #expect(throws: ServicesStopped.self) {
            try await withDeadline(.seconds(60), "the work's end") { try await work.value }
        }
        #expect(error == .ended, "a service ended")
    }
}
