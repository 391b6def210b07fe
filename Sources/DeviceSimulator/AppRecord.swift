import DeviceProtocol
import Foundation
import PushChannel

/// What the device knows about one installed app during a run.
struct AppRecord {
    let app: InstalledApp
    let container: AppContainer
    var state: AppState = .notRunning(.neverLaunched)
    /// `minimumBackgroundFetchInterval` (nil: never, the default) and when the last fetch ran (policy time).
    var fetchInterval: Duration?
    var lastFetch: Duration?
    /// A fetch waiting for the app it launched to connect.
    var launchFetch: Int?
    /// The app's background-push budget.
    var wakeBudget: WakeBudget
    /// The one background push held back by the settings or the budget (docs/ios-rules.md P7–P10); a
    /// timer releases it when the budget allows.
    var heldPush: (push: IncomingPush, notification: RemoteNotificationParams)?
    var process: AppProcess?
    var connection: AppConnection?
    var deviceToken: String?
    /// The cause to record when the process we are killing exits.
    var killCause: NotRunningCause?
    /// A session's events arrived for the app while it was being killed: it is relaunched for them once
    /// its exit is reported.
    var relaunchForSessionsAfterExit = false
    /// The push to hand over in the launch options of a background launch.
    var launchPush: RemoteNotificationParams?
    /// Pushes that arrived while the app was launching.
    var heldPushes: [RemoteNotificationParams] = []
    /// Completion handlers the app still owes, by completion id.
    var outstandingCompletions: [Int: OwedCompletion] = [:]
    /// Wait for the current process to end.
    var exitWaiters: [CheckedContinuation<Void, Never>] = []
    /// Waits for the app's `hello` after a launch.
    var launchWaiter: CheckedContinuation<Void, any Error>?
    init(app: InstalledApp, container: AppContainer, wakeBudget: WakeBudget) {
        self.app = app
        self.container = container
        self.wakeBudget = wakeBudget
    }
}

/// A completion handler the app owes (a push's, a fetch's).
struct OwedCompletion: Equatable {
    /// The delegate method it belongs to, for the watchdog's words.
    var handler: String
    /// When its budget's clock started (policy time); nil while the app is on screen, where it does not run.
    var clockStartedAt: Duration?
}
