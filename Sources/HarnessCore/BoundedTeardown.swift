import HTTPServiceSupport
import HarnessTimeline
import ServiceLifecycle

/// One part of a ``ServiceStack``'s group, held to a time limit once the group stops it: a part that
/// has not returned after `limit` is left behind, named on the timeline as `harness.teardown.stuck`,
/// and `whenStuck` runs (itself given `limit`). A run always ends, and says what would not stop.
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
        // Cancelled with this part's run and awaited at its end, unless it is stuck and left behind.
        let running = Task {
            defer { ended.succeed(()) }
            try await service.run()
        }
        let timer = LockedState<Task<Void, Never>?>(nil)
        let bound: @Sendable () -> Void = { [part, limit, timeline, whenStuck] in
            timer.withLock { timer in
                guard timer == nil else { return }
                // Cancelled when the part ends in time; awaited when it is left behind.
                timer = Task {
                    do { try await Task.sleep(for: limit) } catch { return }
                    guard ended.value == nil else { return }
                    timeline.publish(.teardownStuck, source: "harness", ["part": part, "after": "\(limit)"])
                    ended.fail(Stuck())
                    // Bounded too: what rescues a stuck part may need that part.
                    _ = await Self.finishes(whenStuck, within: limit)
                }
            }
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                // Shielded from cancellation: the handlers here decide how long to wait.
                _ = await uncancelled { try? await ended.wait() }
            } onGracefulShutdown: {
                bound()
            }
        } onCancel: {
            running.cancel()
            bound()
        }
        guard ended.value != nil else {
            // Left behind; the rescue has had its chance when this returns.
            await timer.withLock { $0 }?.value
            return
        }
        timer.withLock { $0 }?.cancel()
        try await running.value
    }

    /// Whether `work` finished within `limit`. Work that did not is left running: a hung await cannot
    /// be taken back, only abandoned.
    static func finishes(_ work: @escaping @Sendable () async -> Void, within limit: Duration) async -> Bool {
        let finished = Readiness<Bool>()
        // Nobody's once the limit passes: a hung await cannot be taken back, only abandoned.
        Task {
            await work()
            finished.succeed(true)
        }
        // The limit holds even for a cancelled caller; its timer is a child, ended with the answer.
        return await uncancelled {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await pause(for: limit)
                    if !Task.isCancelled { finished.succeed(false) }
                }
                let answer = (try? await finished.wait()) ?? false
                group.cancelAll()
                return answer
            }
        }
    }
}

/// A part with nothing to run: it waits for the group's shutdown and then does `close`.
struct ClosingService: Service {
    let close: @Sendable () async -> Void

    func run() async throws {
        // Its one error is the cancellation that ends the group, an end of the wait as well.
        try? await gracefulShutdown()
        await close()
    }
}
