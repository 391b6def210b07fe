import HTTPServiceSupport
import HarnessTimeline
import ServiceLifecycle

/// One part of a ``ServiceStack``'s group, held to a time limit once the group stops it: a part that
/// has not returned after `limit` is left behind, named on the timeline as `harness.teardown.stuck`,
/// and `whenStuck` runs. A run always ends, and says what would not stop.
struct BoundedTeardown: Service {
    let part: String
    let service: any Service
    let limit: Duration
    let timeline: Timeline
    var whenStuck: @Sendable () async -> Void = {}

    private struct Stuck: Error {}

    func run() async throws {
        let ended = Readiness<Void>()
        // The part runs on a task of its own: it keeps the group's graceful-shutdown signal (a task
        // local), and it can be left behind, which a child task cannot.
        let running = Task {
            defer { ended.succeed(()) }
            try await service.run()
        }
        let bounding = LockedState(false)
        let bound: @Sendable () -> Void = { [part, limit, timeline, whenStuck] in
            let first = bounding.withLock { started -> Bool in
                defer { started = true }
                return !started
            }
            guard first else { return }
            Task {
                try? await Task.sleep(for: limit)
                guard ended.value == nil else { return }
                timeline.publish(.teardownStuck, source: "harness", ["part": part, "after": "\(limit)"])
                await whenStuck()
                ended.fail(Stuck())
            }
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                // Shielded from cancellation: the handlers below decide how long to wait.
                _ = await Task { try? await ended.wait() }.value
            } onGracefulShutdown: {
                bound()
            }
        } onCancel: {
            running.cancel()
            bound()
        }
        guard ended.value != nil else { return }
        try await running.value
    }
}

/// A part with nothing to run: it waits for the group's shutdown and then does `close`.
struct ClosingService: Service {
    let close: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await close()
    }
}
