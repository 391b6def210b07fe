import DeviceProtocol
import Testing

@testable import DeviceSimulator

/// What the device knows of each app's URL sessions, a row each: where an event goes, the queue of
/// held events, the handlers owed, a process's end, the resume rate limiter.
@Suite struct SessionEventRouterTests {
    static let app = "com.example"

    func router() -> SessionEventRouter { SessionEventRouter(launchDelay: .seconds(60)) }

    func completed(_ task: Int) -> HeldTransferEvent {
        .completed(DidCompleteParams(session: "s", taskIdentifier: task, error: nil))
    }

    func task(_ event: HeldTransferEvent?) -> Int? {
        guard case .completed(let params)? = event else { return nil }
        return params.taskIdentifier
    }

    @Test func anEventGoesStraightToARunningAppThatHasTheSession() {
        var router = router()
        router.created("s", background: true, by: Self.app)
        let route = router.route(isProgress: false, session: "s", of: Self.app, state: .background, connected: true)
        #expect(route == .deliver)
        let other = router.route(isProgress: false, session: "t", of: Self.app, state: .background, connected: true)
        #expect(other == .hold, "a session the process has not created")
    }

    @Test func aHeldEventQueuesTheLaterOnesBehindIt() {
        var router = router()
        router.created("s", background: true, by: Self.app)
        router.hold(completed(1), session: "s", of: Self.app)
        let route = router.route(isProgress: false, session: "s", of: Self.app, state: .background, connected: true)
        #expect(route == .hold)
        let progress = router.route(isProgress: true, session: "s", of: Self.app, state: .background, connected: true)
        #expect(progress == .drop)
    }

    @Test func aBackgroundSessionsEventRelaunchesACrashedAppButNotAForceQuitOne() {
        var router = router()
        router.created("s", background: true, by: Self.app)
        _ = router.processExited(Self.app)
        let crashed = router.route(
            isProgress: false, session: "s", of: Self.app, state: .notRunning(.crashed), connected: false)
        let forceQuit = router.route(
            isProgress: false, session: "s", of: Self.app, state: .notRunning(.forceQuit), connected: false)
        #expect(crashed == .holdAndRelaunch)
        #expect(forceQuit == .holdUntilUserLaunch)
    }

    @Test func heldEventsAreHandedOverInOrderOnceTheProcessHasTheSession() {
        var router = router()
        router.hold(completed(1), session: "s", of: Self.app)
        router.hold(completed(2), session: "s", of: Self.app)
        let early = router.beginFlush("s", of: Self.app)
        #expect(!early, "not before the process creates the session")
        router.created("s", background: true, by: Self.app)
        let started = router.beginFlush("s", of: Self.app)
        let twice = router.beginFlush("s", of: Self.app)
        #expect(started)
        #expect(!twice, "one hand-over at a time")
        let first = router.nextHeld("s", of: Self.app)
        let second = router.nextHeld("s", of: Self.app)
        let none = router.nextHeld("s", of: Self.app)
        #expect([task(first), task(second)] == [1, 2])
        #expect(none == nil)
        router.endFlush("s", of: Self.app)
    }

    @Test func didFinishEventsIsDueOnceAnAnnouncedSessionHasNothingLeft() {
        var router = router()
        router.created("s", background: true, by: Self.app)
        router.taskStarted(1, in: "s", of: Self.app)
        #expect(!router.isDone("s", of: Self.app), "nothing announced")
        router.owe(7, for: "s", of: Self.app)
        #expect(!router.isDone("s", of: Self.app), "a task still runs")
        router.taskCompleted(1, in: "s", of: Self.app)
        router.hold(completed(1), session: "s", of: Self.app)
        #expect(!router.isDone("s", of: Self.app), "an event is still held")
        _ = router.nextHeld("s", of: Self.app)
        #expect(router.isDone("s", of: Self.app))
    }

    @Test func aHandlerIsPaidOrExpiresOnce() {
        var router = router()
        router.owe(7, for: "s", of: Self.app)
        #expect(router.owesHandler(Self.app))
        let unknown = router.paid(8, by: Self.app)
        let paid = router.paid(7, by: Self.app)
        let again = router.paid(7, by: Self.app)
        #expect(unknown == nil)
        #expect(paid == "s")
        #expect(again == nil)
        router.owe(9, for: "s", of: Self.app)
        let expired = router.expire("s", of: Self.app)
        let expiredAgain = router.expire("s", of: Self.app)
        #expect(expired)
        #expect(!expiredAgain)
        #expect(!router.owesHandler(Self.app))
    }

    @Test func aProcessEndTakesItsSessionsAndHandlersButTheEventsWait() {
        var router = router()
        router.created("s", background: true, by: Self.app)
        router.owe(7, for: "s", of: Self.app)
        router.hold(completed(1), session: "s", of: Self.app)
        let owed = router.processExited(Self.app)
        #expect(owed == ["s"])
        #expect(!router.hasCreated("s", Self.app))
        #expect(!router.owesHandler(Self.app))
        let held = router.takeAllHeld()
        #expect(held.count == 1)
    }

    @Test func sessionsToAnnounceAreTakenOnceInOrder() {
        var router = router()
        router.announceAfterLaunch("b", of: Self.app)
        router.announceAfterLaunch("a", of: Self.app)
        let first = router.takeSessionsToAnnounce(of: Self.app)
        let second = router.takeSessionsToAnnounce(of: Self.app)
        #expect(first == ["a", "b"])
        #expect(second.isEmpty)
    }

    @Test func theRateLimiterHoldsTasksAfterAWakeUntilTheForeground() {
        var router = router()
        #expect(router.startOfTaskCreated(by: Self.app, at: .seconds(10)) == nil)
        router.wokeForSessions(Self.app, at: .seconds(10))
        let held = router.startOfTaskCreated(by: Self.app, at: .seconds(20))
        #expect(held?.start == .seconds(70))
        #expect(held?.delay == .seconds(60))
        router.resetRateLimiter(Self.app)
        #expect(router.startOfTaskCreated(by: Self.app, at: .seconds(20)) == nil)
    }
}
