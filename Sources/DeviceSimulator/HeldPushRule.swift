/// What becomes of the one background push iOS holds for an app (docs/ios-rules.md P7–P9, P13, P14), as a pure
/// function of what happens next, so each row is testable without a process.
public enum HeldPushRule {
    public enum Event: Equatable, Sendable {
        /// Another background push is held for the app.
        case newerPushHeld
        /// The user opened the app (launch or foreground).
        case userOpenedApp
        /// The app's process ended: killed by the system, crashed, or force-quit.
        case appTerminated(NotRunningCause)
        /// The budget allows a background wake again.
        case budgetAllowsWake
    }

    public enum Action: Equatable, Sendable {
        /// Dropped, and why.
        case discard(String)
        /// Delivered to the app on screen, as a foreground push.
        case deliverInForeground
        /// Decided again for the app's state now, as a new arrival would be.
        case decideAgain
    }

    public static func action(on event: Event) -> Action {
        switch event {
        case .newerPushHeld: .discard("a newer push arrived; only the newest held push is kept")
        case .userOpenedApp: .deliverInForeground
        case .appTerminated(let cause):
            .discard("the app was terminated (\(cause.rawValue)); iOS drops a held push then")
        case .budgetAllowsWake: .decideAgain
        }
    }
}

/// The 30 s rule of a background wake (docs/ios-rules.md P13, P14): what the system does with an app that owes
/// a completion handler.
public enum CompletionHandlerRule {
    public enum Outcome: Equatable, Sendable {
        /// The handler was called: the app is suspended unless it owes something else (P13).
        case suspendWhenIdle
        /// Time is up and the handler was not called: the app is killed (P14).
        case watchdogKill
        /// Neither yet.
        case keepRunning
    }

    /// - Parameters:
    ///   - called: the app called the handler.
    ///   - elapsed: policy time since the budget started (nil while it has not: the app is on screen).
    public static func outcome(called: Bool, elapsed: Duration?, budget: Duration) -> Outcome {
        if called { return .suspendWhenIdle }
        guard let elapsed else { return .keepRunning }
        return elapsed >= budget ? .watchdogKill : .keepRunning
    }
}
