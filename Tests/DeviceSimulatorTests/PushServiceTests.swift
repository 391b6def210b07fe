import DeviceProtocol
import PushChannel
import Testing

@testable import DeviceSimulator

/// apsd's and dasd's per-app state as a value, a row each.
@Suite struct PushServiceTests {
    static let app = "com.example"

    func push(_ id: String) -> (IncomingPush, RemoteNotificationParams) {
        (
            IncomingPush(apnsId: id, topic: Self.app, pushType: "background", priority: 5, payload: [:]),
            RemoteNotificationParams(completionId: id.count, userInfo: [:])
        )
    }

    @Test func theBudgetCountsOnlyTheWakesItAllows() {
        var policy = PushPolicy()
        policy.wakesPerHour = 1
        var service = PushService(policy: policy)
        let first = service.spendWake(Self.app, at: .seconds(10))
        let second = service.spendWake(Self.app, at: .seconds(20))
        #expect(first == .allowed)
        guard case .held = second else {
            Issue.record("the second wake within the hour: \(second)")
            return
        }
        let otherApp = service.spendWake("other", at: .seconds(20))
        #expect(otherApp == .allowed, "each app has its own budget")
    }

    @Test func onlyTheNewestHeldPushIsKept() {
        var service = PushService(policy: PushPolicy())
        let (a, aNote) = push("a")
        let (b, bNote) = push("bb")
        let replacedNothing = service.hold(a, aNote, for: Self.app)
        let replaced = service.hold(b, bNote, for: Self.app)
        #expect(replacedNothing == nil)
        #expect(replaced?.push.apnsId == "a")
        let taken = service.takeHeld(Self.app)
        let again = service.takeHeld(Self.app)
        #expect(taken?.push.apnsId == "bb")
        #expect(again == nil)
    }

    @Test func completionsOwedFromTheForegroundAreThoseWithoutAClock() {
        var service = PushService(policy: PushPolicy())
        service.owe(2, OwedCompletion(handler: "h2"), by: Self.app)
        service.owe(1, OwedCompletion(handler: "h1", clockStartedAt: .seconds(5)), by: Self.app)
        #expect(service.owedFromForeground(Self.app).map(\.completionId) == [2])
        #expect(service.owesCompletion(Self.app))
        let settled = service.settle(2, by: Self.app)
        let twice = service.settle(2, by: Self.app)
        #expect(settled)
        #expect(!twice, "a handler is settled once")
    }

    @Test func whatWaitedForTheLaunchIsTakenOnceAndGoesWithTheProcess() {
        var service = PushService(policy: PushPolicy())
        let (_, note) = push("a")
        service.setLaunchPush(note, for: Self.app)
        service.arrivedDuringLaunch(note, for: Self.app)
        service.setLaunchFetch(9, for: Self.app)
        let launchPush = service.takeLaunchPush(Self.app)
        let launchPushAgain = service.takeLaunchPush(Self.app)
        #expect(launchPush == note)
        #expect(launchPushAgain == nil)
        service.owe(1, OwedCompletion(handler: "h"), by: Self.app)
        service.processExited(Self.app)
        let during = service.takeArrivedDuringLaunch(Self.app)
        let fetch = service.takeLaunchFetch(Self.app)
        #expect(during.isEmpty)
        #expect(fetch == nil)
        #expect(!service.owesCompletion(Self.app))
    }

    @Test func aHeldPushOutlivesTheProcessButNotTheApp() {
        var service = PushService(policy: PushPolicy())
        let (a, note) = push("a")
        _ = service.hold(a, note, for: Self.app)
        service.processExited(Self.app)
        #expect(service.hasHeld(Self.app), "the rules decide what becomes of it (HeldPushRule)")
        service.forget(Self.app)
        #expect(!service.hasHeld(Self.app))
    }

    @Test func fetchRemembersItsIntervalAndLastRun() {
        var service = PushService(policy: PushPolicy())
        service.setFetchInterval(.seconds(900), for: Self.app)
        service.fetchStarted(Self.app, at: .seconds(42))
        #expect(service.fetch(Self.app).interval == .seconds(900))
        #expect(service.fetch(Self.app).lastFetch == .seconds(42))
    }
}
