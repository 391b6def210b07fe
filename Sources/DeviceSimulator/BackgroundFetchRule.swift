/// Whether the system runs a background fetch for an app now (objc.io's iOS 7 multitasking; docs/ios-rules.md):
/// `performFetchWithCompletionHandler` wakes a suspended app, or launches one that is not running,
/// as a user launch would but off screen, with the same 30 s rule as a silent push.
public enum BackgroundFetchRule {
    public enum Decision: Equatable, Sendable {
        case deliverInBackground
        case resumeInBackground
        case launchInBackground
        /// No fetch, and why.
        case skipped(String)
    }

    /// - Parameters:
    ///   - interval: `minimumBackgroundFetchInterval`; nil is `UIApplicationBackgroundFetchIntervalNever`,
    ///     the default.
    ///   - sinceLastFetch: policy time since the last fetch; nil if there was none.
    ///   - suppression: why the push policy forbids background work (Background App Refresh off, Low
    ///     Power Mode); nil when it allows it.
    public static func decide(
        state: AppState, backgroundModes: Set<String>, interval: Duration?, sinceLastFetch: Duration?,
        suppression: String?
    ) -> Decision {
        guard backgroundModes.contains("fetch") else { return .skipped("the app lacks fetch in UIBackgroundModes") }
        guard let interval else {
            return .skipped(
                "minimumBackgroundFetchInterval is UIApplicationBackgroundFetchIntervalNever, the default: the app never set it"
            )
        }
        if let since = sinceLastFetch, since < interval {
            return .skipped("the minimum interval of \(interval) has not passed since the last fetch")
        }
        if let suppression { return .skipped(suppression) }
        switch state {
        case .active, .inactive: return .skipped("the app is in the foreground")
        case .launching: return .skipped("the app is launching")
        case .background: return .deliverInBackground
        case .suspended: return .resumeInBackground
        case .notRunning(let cause):
            return cause.isEligibleForBackgroundLaunch
                ? .launchInBackground : .skipped("the user force-quit the app: no background launch")
        }
    }
}
