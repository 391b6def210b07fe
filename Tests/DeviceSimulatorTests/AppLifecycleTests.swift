import DeviceSimulator
import Testing

/// One test per transition of ios.md's app-state table that SpringBoard implements, and the events
/// refused in each state.
@Suite struct AppLifecycleTests {
    func next(_ state: AppState, _ event: LifecycleEvent) -> AppState? {
        try? AppLifecycle.next(state, on: event).get()
    }

    @Test func aUserLaunchEndsOnScreenABackgroundLaunchOffScreen() {
        #expect(next(.notRunning(.neverLaunched), .launch(.user)) == .launching(.user))
        #expect(next(.launching(.user), .connected) == .active)
        for reason: LaunchReason in [.remoteNotification, .backgroundURLSession, .backgroundFetch] {
            #expect(next(.notRunning(.crashed), .launch(reason)) == .launching(reason))
            #expect(next(.launching(reason), .connected) == .background)
        }
        #expect(next(.active, .launch(.user)) == nil, "already running")
        #expect(next(.notRunning(.forceQuit), .launch(.user)) == .launching(.user), "the user may always launch it")
    }

    @Test func homeSendsTheAppToTheBackgroundThenItIsSuspended() {
        #expect(next(.active, .home) == .background)
        #expect(next(.inactive, .home) == .background)
        #expect(next(.background, .suspend) == .suspended)
        #expect(next(.suspended, .home) == nil)
        #expect(next(.active, .suspend) == nil, "an app on screen is never frozen")
    }

    @Test func lockingPassesThroughInactive() {
        #expect(next(.active, .lock) == .inactive)
        #expect(next(.suspended, .lock) == .suspended, "off screen, nothing changes")
        #expect(next(.inactive, .foreground) == .active)
    }

    @Test func theForegroundComesFromTheBackgroundOrSuspension() {
        #expect(next(.background, .foreground) == .active)
        #expect(next(.suspended, .foreground) == .active)
        #expect(next(.notRunning(.exited), .foreground) == nil)
    }

    @Test func aWakeResumesASuspendedApp() {
        #expect(next(.suspended, .wake) == .background)
        #expect(next(.background, .wake) == .background)
        #expect(next(.notRunning(.crashed), .wake) == nil, "a dead app is launched, not woken")
    }

    @Test func everyEndRecordsItsCause() {
        for cause: NotRunningCause in [.crashed, .systemTerminated, .forceQuit, .watchdog, .exited, .rebooted] {
            #expect(next(.suspended, .terminate(cause)) == .notRunning(cause))
        }
        #expect(next(.notRunning(.exited), .terminate(.crashed)) == nil)
    }

    @Test func aRebootRestoresEligibilityAfterAForceQuit() {
        #expect(next(.notRunning(.forceQuit), .reboot) == .notRunning(.rebooted))
        #expect(NotRunningCause.rebooted.isEligibleForBackgroundLaunch)
        #expect(next(.notRunning(.crashed), .reboot) == .notRunning(.crashed))
        #expect(next(.active, .reboot) == nil, "its process ends first")
    }

    @Test func aRefusalSaysWhy() throws {
        let error = try #require(AppLifecycle.next(.suspended, on: .home).failureValue)
        #expect(error.description == "cannot Home an app that is suspended: it is not in the foreground")
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
