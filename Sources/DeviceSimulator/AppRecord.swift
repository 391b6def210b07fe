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
    /// Notification requests waiting for their trigger, by identifier, with the timer that fires each.
    var pendingNotifications:
        [String: (request: NotificationRequestParams, fireAt: Duration, timer: Task<Void, Never>)] = [:]
    /// A tap on a notification, for the app to receive once it is on screen.
    var pendingResponse: NotificationParams?
    /// A fetch waiting for the app it launched to connect.
    var launchFetch: Int?
    /// nsurlsessiond's resume rate limiter for the app.
    var rateLimiter = ResumeRateLimiter()
    /// The app's background-push budget.
    var wakeBudget: WakeBudget
    /// The one background push held back by the settings or the budget (docs/ios-rules.md P7–P10), with the
    /// task that releases it when the budget allows.
    var heldPush: (push: IncomingPush, notification: RemoteNotificationParams)?
    var heldPushRelease: Task<Void, Never>?
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
    /// Fetch completion handlers the app still owes, with their watchdogs (nil in the foreground).
    var outstandingCompletions: [Int: Task<Void, Never>?] = [:]
    var suspendTask: Task<Void, Never>?
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
    /// app still owes: the completion id and the watchdog.
    var sessionHandlers: [String: (completionId: Int, watchdog: Task<Void, Never>)] = [:]

    /// Open background tasks (`beginBackgroundTask`), with the timer of their allowance once the app is
    /// in the background (nil while it is on screen).
    var backgroundTasks: [Int: (name: String, timer: Task<Void, Never>?)] = [:]

    /// Whether the app has nothing left it may finish in the background, so it can be suspended.
    var isIdle: Bool { outstandingCompletions.isEmpty && sessionHandlers.isEmpty && backgroundTasks.isEmpty }

    init(app: InstalledApp, container: AppContainer, wakeBudget: WakeBudget) {
        self.app = app
        self.container = container
        self.wakeBudget = wakeBudget
    }
}

/// A background transfer's delegate event waiting for its app.
enum HeldTransferEvent {
    /// `didCompleteWithError`, ready to send.
    case completed(DidCompleteParams)
    /// `didFinishDownloadingTo`: the file lives until the app has answered; `answered` learns whether it did.
    case finished(DidFinishDownloadingParams, answered: CheckedContinuation<Bool, Never>)
}
