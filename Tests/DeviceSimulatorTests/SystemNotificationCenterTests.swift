import DeviceProtocol
import Testing

@testable import DeviceSimulator

/// The system's notification rules as a value, a row each (docs/ios-rules.md 1.4).
@Suite struct SystemNotificationCenterTests {
    func shown(_ identifier: String, of bundleId: String = "a", body: String = "") -> ShownNotification {
        ShownNotification(bundleId: bundleId, identifier: identifier, title: nil, body: body, userInfo: [:])
    }

    @Test func aNotificationWithAShownOnesIdentifierReplacesItAndGoesLast() {
        var center = SystemNotificationCenter()
        let replaced = [
            center.show(shown("1", body: "first")), center.show(shown("2")), center.show(shown("1", of: "b")),
            center.show(shown("1", body: "second")),
        ]
        #expect(replaced == [false, false, false, true], "another app's identifiers are its own")
        #expect(center.shown.map { "\($0.bundleId)/\($0.identifier)/\($0.body)" } == ["a/2/", "b/1/", "a/1/second"])
    }

    @Test func schedulingKeepsTheSoonestFiring64AndSaysWhichWentOut() {
        var center = SystemNotificationCenter()
        for index in 1...64 {
            let result = center.schedule(
                NotificationRequestParams(identifier: "n\(index)"), for: "a", fireAt: .seconds(100 + index))
            #expect(result.discarded.isEmpty)
        }
        let sooner = center.schedule(NotificationRequestParams(identifier: "soon"), for: "a", fireAt: .seconds(1))
        #expect(sooner.discarded == ["n64"])
        #expect(center.pendingCount(of: "a") == 64)
        let later = center.schedule(NotificationRequestParams(identifier: "late"), for: "a", fireAt: .seconds(999))
        #expect(later.discarded == ["late"], "a request firing after the 64 others is the one discarded")
    }

    @Test func aRequestWithAPendingIdentifierReplacesIt() {
        var center = SystemNotificationCenter()
        let first = center.schedule(
            NotificationRequestParams(identifier: "x", body: "1"), for: "a", fireAt: .seconds(5))
        let second = center.schedule(
            NotificationRequestParams(identifier: "x", body: "2"), for: "a", fireAt: .seconds(9))
        #expect(!first.replaced)
        #expect(second.replaced)
        let fired = center.fire("x", of: "a")
        let again = center.fire("x", of: "a")
        let unscheduled = center.unschedule("x", of: "a")
        #expect(fired?.body == "2")
        #expect(again == nil, "fired once")
        #expect(!unscheduled)
    }

    @Test func aTapTakesTheNewestShownAndItsResponseWaitsForTheApp() {
        var center = SystemNotificationCenter()
        _ = center.show(shown("old"))
        _ = center.show(shown("new"))
        _ = center.show(shown("other", of: "b"))
        let tapped = center.tapNewest(of: "a")
        #expect(tapped?.identifier == "new")
        #expect(center.shown.map(\.identifier) == ["old", "other"])
        let response = center.takeResponse(of: "a")
        let again = center.takeResponse(of: "a")
        let nothing = center.tapNewest(of: "c")
        #expect(response?.identifier == "new")
        #expect(response?.actionIdentifier == "com.apple.UNNotificationDefaultActionIdentifier")
        #expect(again == nil, "handed over once")
        #expect(nothing == nil)
    }

    @Test func deletingTheAppTakesEverythingOfItsAway() {
        var center = SystemNotificationCenter()
        _ = center.show(shown("1"))
        _ = center.show(shown("1", of: "b"))
        _ = center.schedule(NotificationRequestParams(identifier: "p"), for: "a", fireAt: .seconds(5))
        center.setBadge(7, of: "a")
        _ = center.tapNewest(of: "a")
        center.forget("a")
        #expect(center.shown.map(\.bundleId) == ["b"])
        #expect(center.pendingCount(of: "a") == 0)
        #expect(center.badge(of: "a") == 0)
        let response = center.takeResponse(of: "a")
        #expect(response == nil)
    }
}

/// The apps' open background tasks as a value.
@Suite struct BackgroundTasksTests {
    @Test func aTaskIsOpenUntilEndedAndOnlyOnce() throws {
        var tasks = BackgroundTasks()
        try tasks.begin("a", identifier: 1, name: "save")
        #expect(throws: RPCError.self) { try tasks.begin("a", identifier: 1, name: "again") }
        try tasks.begin("b", identifier: 1, name: "other app")
        #expect(tasks.hasOpen("a"))
        let name = try tasks.end("a", identifier: 1)
        #expect(name == "save")
        #expect(throws: RPCError.self) { try tasks.end("a", identifier: 1) }
        #expect(!tasks.hasOpen("a"))
        #expect(tasks.hasOpen("b"))
    }

    @Test func theWatchdogClosesWhatIsOpenAndAnExitForgetsAll() throws {
        var tasks = BackgroundTasks()
        try tasks.begin("a", identifier: 2, name: "two")
        try tasks.begin("a", identifier: 1, name: "one")
        #expect(tasks.identifiers(of: "a") == [1, 2])
        let closed = tasks.close("a", identifier: 2)
        let again = tasks.close("a", identifier: 2)
        #expect(closed == "two")
        #expect(again == nil)
        tasks.forget("a")
        #expect(tasks.identifiers(of: "a").isEmpty)
    }
}
