import Testing

@testable import DeviceSimulator

/// One test per row of ios.md's background-session table that the device implements.
@Suite struct BackgroundSessionRuleTests {
    func route(
        _ state: AppState, progress: Bool = false, background: Bool = true, connected: Bool = true,
        created: Bool = true, waiting: Bool = false
    ) -> BackgroundSessionRule.Route {
        BackgroundSessionRule.route(
            isProgress: progress, isBackgroundSession: background, state: state, connected: connected,
            sessionCreated: created, eventsWaiting: waiting)
    }

    @Test func u1ARunningAppWithItsSessionGetsEventsDirectly() {
        #expect(route(.active) == .deliver)
        #expect(route(.background) == .deliver)
        #expect(route(.active, progress: true) == .deliver)
        #expect(route(.active, waiting: true) == .hold, "a new event queues behind held ones")
    }

    @Test func u3ASuspendedAppIsResumedForTheSessionsEvents() {
        #expect(route(.suspended) == .holdAndResume)
        #expect(route(.suspended, progress: true) == .drop, "progress does not wake an app")
    }

    @Test func u4AndU5AnAppThatIsNotRunningIsRelaunchedUnlessForceQuit() {
        for cause: NotRunningCause in [.systemTerminated, .crashed, .watchdog, .exited] {
            #expect(route(.notRunning(cause), connected: false, created: false) == .holdAndRelaunch, "\(cause)")
        }
    }

    @Test func u6AfterForceQuitEventsWaitForTheUsersLaunch() {
        #expect(route(.notRunning(.forceQuit), connected: false, created: false) == .holdUntilUserLaunch)
    }

    @Test func u7ARunningAppThatHasNotRecreatedTheSessionGetsNothingYet() {
        #expect(route(.active, created: false) == .hold)
        #expect(route(.launching(.backgroundURLSession), connected: false, created: false) == .hold)
        #expect(route(.active, progress: true, created: false) == .drop)
    }

    @Test func aDefaultSessionsEventsDieWithItsApp() {
        #expect(route(.active, background: false) == .deliver)
        #expect(route(.suspended, background: false) == .hold, "frozen with the app, delivered when it runs")
        #expect(route(.notRunning(.crashed), background: false, connected: false, created: false) == .drop)
    }
}
