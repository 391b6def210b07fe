/// Where an app is in iOS's life cycle, including the two states the app itself cannot see:
/// suspended, and terminated with or without eligibility for a background relaunch.
public enum AppState: Equatable, Sendable, CustomStringConvertible {
    case notRunning(NotRunningCause)
    case launching(LaunchReason)
    case active
    /// In the foreground but not receiving events: on its way to the background as the device locks.
    case inactive
    /// Running in the background: it has work (a push's 30 s, the grace period after Home).
    case background
    /// Frozen with `SIGSTOP`.
    case suspended

    public var description: String {
        switch self {
        case .notRunning(let cause): "not running (\(cause.rawValue))"
        case .launching(let reason): "launching (\(reason.rawValue))"
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        case .suspended: "suspended"
        }
    }

    /// The short name used in timeline events and expectations.
    public var name: String {
        switch self {
        case .notRunning: "notRunning"
        case .launching: "launching"
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        case .suspended: "suspended"
        }
    }

    public var isRunning: Bool {
        switch self {
        case .active, .inactive, .background, .suspended, .launching: true
        case .notRunning: false
        }
    }

    /// Active or inactive: on screen.
    public var isForeground: Bool { self == .active || self == .inactive }

    /// Running and not frozen: it can take messages now.
    public var isAwake: Bool { isForeground || self == .background }
}

/// Why an app is not running. iOS relaunches an app for background events after every cause but the
/// user's force-quit.
public enum NotRunningCause: String, Sendable {
    case neverLaunched
    case exited
    case crashed
    case watchdog
    case systemTerminated
    case forceQuit
    /// The device restarted: eligible again even after a force-quit (for pushes, not for transfers).
    case rebooted

    public var isEligibleForBackgroundLaunch: Bool { self != .forceQuit }
}

/// Why SpringBoard launched the app; the app receives it in its launch options.
public enum LaunchReason: String, Sendable {
    case user
    case remoteNotification = "remote-notification"
    case backgroundURLSession = "background-url-session"
    case backgroundFetch = "background-fetch"

    public var startsInForeground: Bool { self == .user }
}
