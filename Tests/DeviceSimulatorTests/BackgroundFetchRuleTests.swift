import Testing

@testable import DeviceSimulator

@Suite struct BackgroundFetchRuleTests {
    func decide(
        _ state: AppState, modes: Set<String> = ["fetch"], interval: Duration? = .zero, since: Duration? = nil,
        suppression: String? = nil
    ) -> BackgroundFetchRule.Decision {
        BackgroundFetchRule.decide(
            state: state, backgroundModes: modes, interval: interval, sinceLastFetch: since, suppression: suppression)
    }

    @Test func aSuspendedAppIsWokenAndANotRunningOneLaunched() {
        #expect(decide(.suspended) == .resumeInBackground)
        #expect(decide(.background) == .deliverInBackground)
        #expect(decide(.notRunning(.systemTerminated)) == .launchInBackground)
        #expect(decide(.notRunning(.neverLaunched)) == .launchInBackground)
    }

    @Test func noFetchWithoutTheModeTheIntervalOrAfterForceQuit() {
        #expect(
            decide(.suspended, modes: ["remote-notification"]) == .skipped("the app lacks fetch in UIBackgroundModes"))
        guard case .skipped(let never) = decide(.suspended, interval: nil) else {
            Issue.record("the default interval is never")
            return
        }
        #expect(never.contains("UIApplicationBackgroundFetchIntervalNever"))
        #expect(decide(.notRunning(.forceQuit)) == .skipped("the user force-quit the app: no background launch"))
        #expect(decide(.active) == .skipped("the app is in the foreground"))
    }

    @Test func theMinimumIntervalAndTheSettingsAreHonoured() {
        #expect(decide(.suspended, interval: .seconds(3600), since: .seconds(60)) != .resumeInBackground)
        #expect(decide(.suspended, interval: .seconds(3600), since: .seconds(3600)) == .resumeInBackground)
        #expect(
            decide(.suspended, suppression: "Background App Refresh is off")
                == .skipped("Background App Refresh is off"))
    }
}
