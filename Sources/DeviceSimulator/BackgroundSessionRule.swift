/// Where a transfer task's delegate event goes, given the app's state: the policy of docs/ios-rules.md's
/// background-session table (U1–U7), as a pure function so each row is testable without a process.
public enum BackgroundSessionRule {
    public enum Route: Equatable, Sendable {
        /// The app runs and has created the session in this process: hand the event over now (U1).
        case deliver
        /// Progress the app cannot see now, or an event of a default session whose app is gone (its
        /// tasks died with it): nobody receives it.
        case drop
        /// Kept for the session until the app, running or launching, creates it (U7).
        case hold
        /// Kept; the app is suspended: resume it in the background and call
        /// `handleEventsForBackgroundURLSession` (U3).
        case holdAndResume
        /// Kept; the app is not running but may be relaunched: launch it in the background and call
        /// `handleEventsForBackgroundURLSession` (U4, and U5 after a crash).
        case holdAndRelaunch
        /// Kept until the user launches the app again: iOS does not relaunch an app the user force-quit (U6).
        case holdUntilUserLaunch
    }

    /// - Parameters:
    ///   - isProgress: a `didWriteData` event (the others are `didFinishDownloadingTo` and
    ///     `didCompleteWithError`).
    ///   - isBackgroundSession: the task belongs to a `background(withIdentifier:)` session.
    ///   - connected: the app's process has connected to the device.
    ///   - sessionCreated: the app's current process has created the session.
    ///   - eventsWaiting: earlier events of the session are still held; a new one must queue behind them.
    public static func route(
        isProgress: Bool, isBackgroundSession: Bool, state: AppState, connected: Bool, sessionCreated: Bool,
        eventsWaiting: Bool
    ) -> Route {
        let running = state.isAwake && connected
        if running, sessionCreated, !eventsWaiting { return .deliver }
        if isProgress { return .drop }
        guard isBackgroundSession else {
            // A default session's tasks live in the app's process: held while it is frozen, gone with it.
            return state.isRunning ? .hold : .drop
        }
        switch state {
        case .suspended: return .holdAndResume
        case .notRunning(let cause):
            return cause.isEligibleForBackgroundLaunch ? .holdAndRelaunch : .holdUntilUserLaunch
        case .active, .inactive, .background, .launching: return .hold
        }
    }
}
