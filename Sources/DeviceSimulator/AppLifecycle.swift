/// What happens to an app, as SpringBoard sees it.
public enum LifecycleEvent: Equatable, Sendable, CustomStringConvertible {
    /// Its process starts, for `reason`.
    case launch(LaunchReason)
    /// The launched process said hello: on screen for a user launch, in the background otherwise.
    case connected
    /// The Home button.
    case home
    /// The device locks with the app on screen: it resigns active on its way to the background.
    case lock
    /// Back to the foreground (the app switcher, an unlock, a tap on a notification).
    case foreground
    /// Frozen (`SIGSTOP`) once it has nothing left to finish.
    case suspend
    /// Resumed in the background for a push, a fetch or a session's events.
    case wake
    /// Its process ended, for `cause`.
    case terminate(NotRunningCause)
    /// The device restarted (the app's process, if any, has ended already).
    case reboot

    public var description: String {
        switch self {
        case .launch(let reason): "launch (\(reason.rawValue))"
        case .connected: "connect"
        case .home: "Home"
        case .lock: "lock"
        case .foreground: "come to the foreground"
        case .suspend: "suspend"
        case .wake: "wake in the background"
        case .terminate(let cause): "end (\(cause.rawValue))"
        case .reboot: "reboot"
        }
    }
}

/// SpringBoard's state machine for one app (docs/ios-rules.md's app-state table), pure so that every transition is
/// testable without a process: the state an event leads to, or why the event cannot happen now.
public enum AppLifecycle {
    public static func next(_ state: AppState, on event: LifecycleEvent) -> Result<AppState, LifecycleError> {
        func refuse(_ why: String) -> Result<AppState, LifecycleError> {
            .failure(LifecycleError(state: state, event: event, why: why))
        }
        switch (event, state) {
        case (.launch(let reason), let state) where !state.isRunning:
            return .success(.launching(reason))
        case (.launch, _):
            return refuse("it is already running")
        case (.connected, .launching(let reason)):
            return .success(reason.startsInForeground ? .active : .background)
        case (.connected, _):
            return refuse("no launch is waiting for it")
        case (.home, let state) where state.isForeground:
            return .success(.background)
        case (.home, _):
            return refuse("it is not in the foreground")
        case (.lock, let state) where state.isForeground:
            return .success(.inactive)
        case (.lock, let state):
            return .success(state)  // off screen, locking changes nothing for it
        case (.foreground, .background), (.foreground, .suspended), (.foreground, .inactive):
            return .success(.active)
        case (.foreground, _):
            return refuse("it is not in the background")
        case (.suspend, .background):
            return .success(.suspended)
        case (.suspend, _):
            return refuse("only an app running in the background is suspended")
        case (.wake, .suspended), (.wake, .background):
            return .success(.background)
        case (.wake, _):
            return refuse("only a suspended or background app is woken in the background")
        case (.terminate(let cause), let state) where state.isRunning:
            return .success(.notRunning(cause))
        case (.terminate, _):
            return refuse("it is not running")
        case (.reboot, .notRunning(.forceQuit)):
            // A restart makes a force-quit app eligible for background launches again (P6).
            return .success(.notRunning(.rebooted))
        case (.reboot, let state) where !state.isRunning:
            return .success(state)
        case (.reboot, _):
            return refuse("its process must end first")
        }
    }
}

/// An event that cannot happen to an app in its state.
public struct LifecycleError: Error, Equatable, CustomStringConvertible {
    public var state: AppState
    public var event: LifecycleEvent
    public var why: String

    public var description: String { "cannot \(event) an app that is \(state): \(why)" }
}
