import HarnessTimeline
import Logging
import ServiceLifecycle
import TestSupport
import Testing

@testable import HarnessCore

/// A run's teardown always ends: the stack's group stops its parts in reverse order, waits for each
/// that stops, and leaves behind, by name, a part that will not.
@Suite struct TeardownTests {
    /// Says on the timeline that it runs, records when it stopped; stops when the group asks, or never.
    struct Part: Service {
        let name: String
        let log: LockedState<[String]>
        let timeline: Timeline
        var stops = true

        func run() async throws {
            timeline.publish("test.part.running", source: "test", ["part": name])
            try? await gracefulShutdown()
            if !stops {
                // An await nothing will ever resume, like a stop that hangs.
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            }
            log.withLock { $0.append("\(name) stopped") }
        }
    }

    private func group(_ parts: [BoundedTeardown]) -> ServiceGroup {
        ServiceGroup(
            configuration: .init(
                services: parts.map {
                    .init(
                        service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup)
                }, logger: Logger(label: "test")))
    }

    /// Returns once `count` parts have said they run: the group is up.
    private func everyPart(_ count: Int, runningOn timeline: Timeline) async throws {
        _ = try await timeline.waitFor("\(count) parts running", timeout: .seconds(60)) { _ in
            timeline.events.filter { $0.kind == "test.part.running" }.count == count
        }
    }

    @Test func partsStopInReverseOrderAndEachIsWaitedFor() async throws {
        let log = LockedState<[String]>([])
        let timeline = Timeline()
        let parts = ["apns", "media", "device"].map {
            BoundedTeardown(
                part: $0, service: Part(name: $0, log: log, timeline: timeline), limit: .seconds(600),
                timeline: timeline)
        }
        let group = group(parts)
        let running = Task { try await group.run() }
        try await everyPart(3, runningOn: timeline)
        await group.triggerGracefulShutdown()
        try await withDeadline(.seconds(60), "the group's end") { try await running.value }
        #expect(log.withLock { $0 } == ["device stopped", "media stopped", "apns stopped"])
        #expect(!timeline.events.contains { $0.kind == .teardownStuck })
    }

    @Test func aPartThatNeverStopsIsNamedAndLeftBehindAfterItsLimit() async throws {
        let log = LockedState<[String]>([])
        let timeline = Timeline()
        let rescued = LockedState(false)
        var stuck = BoundedTeardown(
            part: "device", service: Part(name: "device", log: log, timeline: timeline, stops: false),
            limit: .milliseconds(100),
            timeline: timeline)
        stuck.whenStuck = { rescued.withLock { $0 = true } }
        let group = group([
            BoundedTeardown(
                part: "apns", service: Part(name: "apns", log: log, timeline: timeline), limit: .seconds(600),
                timeline: timeline),
            stuck,
        ])
        let running = Task { try await group.run() }
        try await everyPart(2, runningOn: timeline)
        await group.triggerGracefulShutdown()
        try await withDeadline(.seconds(60), "the group's end") { try await running.value }
        let named = timeline.events.filter { $0.kind == .teardownStuck }
        #expect(named.map { $0["part"] } == ["device"])
        #expect(rescued.withLock { $0 })
        // The part after the stuck one in shutdown order still stopped.
        #expect(log.withLock { $0 }.last == "apns stopped")
    }

    @Test func aRescueThatHangsIsLeftBehindToo() async throws {
        let log = LockedState<[String]>([])
        let timeline = Timeline()
        var stuck = BoundedTeardown(
            part: "device", service: Part(name: "device", log: log, timeline: timeline, stops: false),
            limit: .milliseconds(100), timeline: timeline)
        // Like killing the apps of a device whose actor is the stuck part.
        stuck.whenStuck = { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
        let group = group([stuck])
        let running = Task { try await group.run() }
        try await everyPart(1, runningOn: timeline)
        await group.triggerGracefulShutdown()
        try await withDeadline(.seconds(60), "the group's end") { try await running.value }
        #expect(timeline.events.filter { $0.kind == .teardownStuck }.count == 1)
    }

    @Test func workThatFinishesIsWaitedFor() async {
        let finished = await BoundedTeardown.finishes({ await Task.yield() }, within: .seconds(600))
        #expect(finished)
    }

    @Test func workThatNeverFinishesIsLeftAfterTheLimit() async {
        let never: @Sendable () async -> Void = {
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        }
        let finished = await BoundedTeardown.finishes(never, within: .milliseconds(100))
        #expect(!finished)
    }
}
