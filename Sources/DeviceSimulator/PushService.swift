import DeviceProtocol
import PushChannel

/// A completion handler the app owes (a push's, a fetch's).
struct OwedCompletion: Equatable {
    /// The delegate method it belongs to, for the watchdog's words.
    var handler: String
    /// When its budget's clock started (policy time); nil while the app is on screen, where it does not run.
    var clockStartedAt: Duration?
}

/// apsd's and dasd's side of every app (docs/ios-rules.md P1–P14): its background-push budget, the one
/// push held back, the push handed over in a launch's options, the pushes that arrived during a launch,
/// the completion handlers it owes, and background fetch's interval, last run and pending launch. A
/// value: the wake decisions are ``SilentPushWakeRule``'s, ``HeldPushRule``'s and ``WakeBudget``'s from
/// what this holds; the device does the waking and runs the watchdogs.
struct PushService {
    /// One app's pushes.
    struct AppPushes {
        var budget: WakeBudget
        /// The one background push held back by the settings or the budget (P7–P10).
        var held: (push: IncomingPush, notification: RemoteNotificationParams)?
        /// The push to hand over in the launch options of a background launch.
        var launchPush: RemoteNotificationParams?
        /// Pushes that arrived while the app was launching.
        var duringLaunch: [RemoteNotificationParams] = []
        /// Completion handlers the app owes, by completion id.
        var owed: [Int: OwedCompletion] = [:]
        /// `minimumBackgroundFetchInterval` (nil: never, the default) and the last fetch (policy time).
        var fetchInterval: Duration?
        var lastFetch: Duration?
        /// A fetch waiting for the app it launched to connect.
        var launchFetch: Int?
    }

    let policy: PushPolicy
    private var apps: [String: AppPushes] = [:]

    init(policy: PushPolicy) { self.policy = policy }

    private subscript(_ bundleId: String) -> AppPushes {
        get { apps[bundleId] ?? AppPushes(budget: WakeBudget(policy: policy)) }
        set { apps[bundleId] = newValue }
    }

    // MARK: The budget

    /// Whether a background wake may happen now; an allowed one is counted.
    mutating func spendWake(_ bundleId: String, at now: Duration) -> WakeBudget.Verdict {
        let verdict = self[bundleId].budget.verdict(at: now)
        if case .allowed = verdict { self[bundleId].budget.record(at: now) }
        return verdict
    }

    // MARK: The held push

    /// Holds `push` back, replacing the one held before (only the newest is kept, P7): the one replaced.
    mutating func hold(_ push: IncomingPush, _ notification: RemoteNotificationParams, for bundleId: String)
        -> (push: IncomingPush, notification: RemoteNotificationParams)?
    {
        defer { self[bundleId].held = (push, notification) }
        return self[bundleId].held
    }

    /// The held push, taken.
    mutating func takeHeld(_ bundleId: String) -> (push: IncomingPush, notification: RemoteNotificationParams)? {
        defer { self[bundleId].held = nil }
        return self[bundleId].held
    }

    func hasHeld(_ bundleId: String) -> Bool { self[bundleId].held != nil }

    // MARK: Launches

    mutating func setLaunchPush(_ notification: RemoteNotificationParams?, for bundleId: String) {
        self[bundleId].launchPush = notification
    }

    /// The push for the launch's options, taken once the app connects.
    mutating func takeLaunchPush(_ bundleId: String) -> RemoteNotificationParams? {
        defer { self[bundleId].launchPush = nil }
        return self[bundleId].launchPush
    }

    /// A push that arrived while the app was launching, for it to receive once connected.
    mutating func arrivedDuringLaunch(_ notification: RemoteNotificationParams, for bundleId: String) {
        self[bundleId].duringLaunch.append(notification)
    }

    mutating func takeArrivedDuringLaunch(_ bundleId: String) -> [RemoteNotificationParams] {
        defer { self[bundleId].duringLaunch.removeAll() }
        return self[bundleId].duringLaunch
    }

    // MARK: Completion handlers

    mutating func owe(_ completionId: Int, _ owed: OwedCompletion, by bundleId: String) {
        self[bundleId].owed[completionId] = owed
    }

    func owed(_ completionId: Int, by bundleId: String) -> OwedCompletion? { self[bundleId].owed[completionId] }

    /// The handlers owed from the foreground, whose clock has not started.
    func owedFromForeground(_ bundleId: String) -> [(completionId: Int, handler: String)] {
        self[bundleId].owed.filter { $0.value.clockStartedAt == nil }.map { ($0.key, $0.value.handler) }
            .sorted { $0.completionId < $1.completionId }
    }

    /// The app called the handler, or the watchdog took it: whether it was owed.
    @discardableResult
    mutating func settle(_ completionId: Int, by bundleId: String) -> Bool {
        self[bundleId].owed.removeValue(forKey: completionId) != nil
    }

    func owesCompletion(_ bundleId: String) -> Bool { !self[bundleId].owed.isEmpty }

    // MARK: Background fetch

    func fetch(_ bundleId: String) -> (interval: Duration?, lastFetch: Duration?) {
        (self[bundleId].fetchInterval, self[bundleId].lastFetch)
    }

    mutating func setFetchInterval(_ interval: Duration?, for bundleId: String) {
        self[bundleId].fetchInterval = interval
    }

    mutating func fetchStarted(_ bundleId: String, at now: Duration) { self[bundleId].lastFetch = now }

    mutating func setLaunchFetch(_ completionId: Int?, for bundleId: String) {
        self[bundleId].launchFetch = completionId
    }

    mutating func takeLaunchFetch(_ bundleId: String) -> Int? {
        defer { self[bundleId].launchFetch = nil }
        return self[bundleId].launchFetch
    }

    // MARK: The process

    /// The app's process ended: what it owed, and what waited for its launch, went with it (the held
    /// push is the rules' to decide, ``HeldPushRule``).
    mutating func processExited(_ bundleId: String) {
        self[bundleId].owed.removeAll()
        self[bundleId].duringLaunch.removeAll()
        self[bundleId].launchPush = nil
        self[bundleId].launchFetch = nil
    }

    /// The app was (re)installed or deleted: nothing of it is kept.
    mutating func forget(_ bundleId: String) { apps[bundleId] = nil }
}
