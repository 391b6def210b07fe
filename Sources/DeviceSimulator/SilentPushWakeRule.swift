/// What iOS does with an incoming remote notification, given the app's state: the policy of the
/// architecture's push table, as a pure function so every row is testable without a process.
public enum SilentPushWakeRule {
    public enum Decision: Equatable, Sendable {
        /// The app is active: `didReceiveRemoteNotification` at once, no 30 s clock.
        case deliverInForeground
        /// Running in the background already: deliver and start the 30 s budget.
        case deliverInBackground
        /// Suspended: `SIGCONT`, deliver, 30 s budget.
        case resumeInBackground
        /// Not running but eligible: launch with the push in the launch options, 30 s budget.
        case launchInBackground
        /// Launch in progress: deliver once the app has connected.
        case deliverAfterLaunch
        /// The user force-quit the app: iOS does not launch it for a push.
        case notLaunchedAfterForceQuit
        /// The app lacks `remote-notification` in `UIBackgroundModes`.
        case ignoredNoBackgroundMode
        /// No `content-available: 1`: no background wake (an alert is shown by the system instead).
        case notSilent
    }

    public static func decide(
        state: AppState, isContentAvailable: Bool, backgroundModes: Set<String>
    ) -> Decision {
        if state.isForeground { return .deliverInForeground }
        guard isContentAvailable else { return .notSilent }
        guard backgroundModes.contains("remote-notification") else { return .ignoredNoBackgroundMode }
        switch state {
        case .active, .inactive: return .deliverInForeground
        case .background: return .deliverInBackground
        case .suspended: return .resumeInBackground
        case .launching: return .deliverAfterLaunch
        case .notRunning(let cause):
            return cause.isEligibleForBackgroundLaunch ? .launchInBackground : .notLaunchedAfterForceQuit
        }
    }
}
