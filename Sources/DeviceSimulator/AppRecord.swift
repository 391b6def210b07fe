import DeviceProtocol
import Foundation

/// What the device knows about one installed app during a run.
struct AppRecord {
    let app: InstalledApp
    let container: AppContainer
    var state: AppState = .notRunning(.neverLaunched)
    /// `minimumBackgroundFetchInterval` (nil: never, the default) and when the last fetch ran (policy time).
    var fetchInterval: Duration?
    var lastFetch: Duration?
    /// Notification requests waiting for their trigger (a ``PolicyTimers`` timer each), by identifier.
    var pendingNotifications: [String: (request: NotificationRequestParams, fireAt: Duration)] = [:]
    /// A tap on a notification, for the app to receive once it is on screen.
    var pendingResponse: NotificationParams?
    /// A fetch waiting for the app it launched to connect.
    var launchFetch: Int?
    /// nsurlsessiond's resume rate limiter for the app.
    var rateLimiter = ResumeRateLimiter()
    /// The app's background-push budget.
    var wakeBudget: WakeBudget
    /// The one background push held back by the settings or the budget (docs/ios-rules.md P7–P10); a
    /// timer releases it when the budget allows.
    var heldPush: (push: IncomingPush, notification: RemoteNotificationParams)?
    var process: AppProcess?
    var connection: AppConnection?
    var deviceToken: String?
    var badge = 0
    /// The cause to record when the process we are killing exits.
    var killCause: NotRunningCause?
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
    /// Sessions the app created with `background(withIdentifier:)`, in any of its processes.
    var backgroundSessions: Set<String> = []
    /// Sessions the current process has created: only those can receive events.
    var createdSessions: Set<String> = []
    /// Tasks of each session that have not completed.
    var runningTasks: [String: Set<Int>] = [:]
    /// Events of each session that wait for the app (``BackgroundSessionRule``), in order.
    var heldSessionEvents: [String: [HeldTransferEvent]] = [:]
    /// Sessions being handed their held events right now.
    var flushingSessions: Set<String> = []
    /// Sessions whose events should be announced with `handleEventsForBackgroundURLSession` once the
    /// app, being relaunched, has connected.
    var sessionsToAnnounce: Set<String> = []
    /// Sessions announced with `handleEventsForBackgroundURLSession` in this process whose handler the
    /// app still owes, with its completion id.
    var sessionHandlers: [String: Int] = [:]

    /// Open background tasks (`beginBackgroundTask`), by identifier, with their names; the timer of their
    /// allowance runs once the app is in the background.
    var backgroundTasks: [Int: String] = [:]

    /// Whether the app has nothing left it may finish in the background, so it can be suspended.
    var isIdle: Bool { outstandingCompletions.isEmpty && sessionHandlers.isEmpty && backgroundTasks.isEmpty }

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

/// A background transfer's delegate event waiting for its app.
enum HeldTransferEvent {
    /// `didCompleteWithError`, ready to send.
    case completed(DidCompleteParams)
    /// `didFinishDownloadingTo`: the file lives until the app has answered; `answered` learns whether it did.
    case finished(DidFinishDownloadingParams, answered: CheckedContinuation<Bool, Never>)
}
