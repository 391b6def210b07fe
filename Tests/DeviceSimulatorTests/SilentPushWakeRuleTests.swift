import DeviceSimulator
import Testing

/// One test per row of the architecture's silent-push table that the simulator implements.
@Suite struct SilentPushWakeRuleTests {
    let modes: Set<String> = ["remote-notification"]

    @Test func foregroundAppGetsThePushAtOnce() {
        #expect(
            SilentPushWakeRule.decide(state: .active, isContentAvailable: true, backgroundModes: modes)
                == .deliverInForeground)
    }

    @Test func p2AnInactiveAppGetsItAsInTheForeground() {
        #expect(
            SilentPushWakeRule.decide(state: .inactive, isContentAvailable: true, backgroundModes: modes)
                == .deliverInForeground)
    }

    @Test func p6ARebootRestoresBackgroundLaunchesAfterAForceQuit() {
        #expect(
            SilentPushWakeRule.decide(state: .notRunning(.rebooted), isContentAvailable: true, backgroundModes: modes)
                == .launchInBackground)
    }

    @Test func suspendedAppIsResumedInTheBackground() {
        #expect(
            SilentPushWakeRule.decide(state: .suspended, isContentAvailable: true, backgroundModes: modes)
                == .resumeInBackground)
    }

    @Test func backgroundAppGetsItWithABudget() {
        #expect(
            SilentPushWakeRule.decide(state: .background, isContentAvailable: true, backgroundModes: modes)
                == .deliverInBackground)
    }

    @Test(arguments: [NotRunningCause.crashed, .systemTerminated, .watchdog, .neverLaunched, .exited])
    func appThatIsNotRunningButEligibleIsLaunchedInTheBackground(cause: NotRunningCause) {
        #expect(
            SilentPushWakeRule.decide(state: .notRunning(cause), isContentAvailable: true, backgroundModes: modes)
                == .launchInBackground)
    }

    @Test func forceQuitAppIsNotLaunched() {
        #expect(
            SilentPushWakeRule.decide(state: .notRunning(.forceQuit), isContentAvailable: true, backgroundModes: modes)
                == .notLaunchedAfterForceQuit)
    }

    @Test func pushWithoutContentAvailableDoesNotWakeABackgroundApp() {
        #expect(
            SilentPushWakeRule.decide(state: .suspended, isContentAvailable: false, backgroundModes: modes)
                == .notSilent)
    }

    @Test func appWithoutTheRemoteNotificationModeIsNotWoken() {
        #expect(
            SilentPushWakeRule.decide(state: .suspended, isContentAvailable: true, backgroundModes: ["fetch"])
                == .ignoredNoBackgroundMode)
    }

    @Test func aPushDuringLaunchWaitsForTheAppToConnect() {
        #expect(
            SilentPushWakeRule.decide(state: .launching(.user), isContentAvailable: true, backgroundModes: modes)
                == .deliverAfterLaunch)
    }

    @Test func anActiveAppGetsEvenANonSilentPush() {
        #expect(
            SilentPushWakeRule.decide(state: .active, isContentAvailable: false, backgroundModes: [])
                == .deliverInForeground)
    }

    @Test func onlyForceQuitRemovesBackgroundLaunchEligibility() {
        #expect(!NotRunningCause.forceQuit.isEligibleForBackgroundLaunch)
        #expect(NotRunningCause.crashed.isEligibleForBackgroundLaunch)
    }
}
