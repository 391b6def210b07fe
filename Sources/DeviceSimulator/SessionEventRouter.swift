import DeviceProtocol

/// A background transfer's delegate event waiting for its app.
enum HeldTransferEvent {
    /// `didCompleteWithError`, ready to send.
    case completed(DidCompleteParams)
    /// `didFinishDownloadingTo`: the file lives until the app has answered; `answered` learns whether it did.
    case finished(DidFinishDownloadingParams, answered: CheckedContinuation<Bool, Never>)
}

/// What the device knows of each app's URL sessions (docs/ios-rules.md U1–U9): the sessions it has made,
/// in any process and in the current one, their running tasks, the events waiting for the app, the
/// sessions to announce once a relaunched app connects, the handlers the app owes, and nsurlsessiond's
/// resume rate limiter. A value: where an event goes is ``BackgroundSessionRule``'s decision from what
/// this holds; the device does the waking, the sending and the watchdogs.
struct SessionEventRouter {
    /// One app's sessions.
    struct AppSessions {
        /// Sessions the app created with `background(withIdentifier:)`, in any of its processes.
        var background: Set<String> = []
        /// Sessions the current process has created: only those can receive events.
        var created: Set<String> = []
        /// Tasks of each session that have not completed.
        var running: [String: Set<Int>] = [:]
        /// Events of each session that wait for the app, in order.
        var held: [String: [HeldTransferEvent]] = [:]
        /// Sessions being handed their held events right now.
        var flushing: Set<String> = []
        /// Sessions to announce with `handleEventsForBackgroundURLSession` once the relaunched app connects.
        var toAnnounce: Set<String> = []
        /// Sessions announced in this process whose completion handler the app owes, with its id.
        var handlers: [String: Int] = [:]
        var rateLimiter: ResumeRateLimiter
    }

    private var apps: [String: AppSessions] = [:]
    /// `sessionLaunchDelay`: the rate limiter's first delay.
    let launchDelay: Duration

    init(launchDelay: Duration) { self.launchDelay = launchDelay }

    private subscript(_ bundleId: String) -> AppSessions {
        get { apps[bundleId] ?? AppSessions(rateLimiter: ResumeRateLimiter(initialDelay: launchDelay)) }
        set { apps[bundleId] = newValue }
    }

    /// The app's current process created `session`.
    mutating func created(_ session: String, background: Bool, by bundleId: String) {
        self[bundleId].created.insert(session)
        if background { self[bundleId].background.insert(session) }
    }

    func hasCreated(_ session: String, _ bundleId: String) -> Bool { self[bundleId].created.contains(session) }

    /// Sessions the current process has created, in order.
    func createdSessions(of bundleId: String) -> [String] { self[bundleId].created.sorted() }

    mutating func taskStarted(_ task: Int, in session: String, of bundleId: String) {
        self[bundleId].running[session, default: []].insert(task)
    }

    mutating func taskCompleted(_ task: Int, in session: String, of bundleId: String) {
        self[bundleId].running[session]?.remove(task)
    }

    /// Where an event of `session` goes now, for an app in `state` (``BackgroundSessionRule``).
    func route(isProgress: Bool, session: String, of bundleId: String, state: AppState, connected: Bool)
        -> BackgroundSessionRule.Route
    {
        let sessions = self[bundleId]
        return BackgroundSessionRule.route(
            isProgress: isProgress, isBackgroundSession: sessions.background.contains(session), state: state,
            connected: connected, sessionCreated: sessions.created.contains(session),
            eventsWaiting: !(sessions.held[session]?.isEmpty ?? true) || sessions.flushing.contains(session))
    }

    /// Keeps an event for the app, behind the session's earlier ones.
    mutating func hold(_ event: HeldTransferEvent, session: String, of bundleId: String) {
        self[bundleId].held[session, default: []].append(event)
    }

    /// Starts handing the session's held events over, if the current process has created the session,
    /// some are waiting and no hand-over is under way; whether it started.
    mutating func beginFlush(_ session: String, of bundleId: String) -> Bool {
        let sessions = self[bundleId]
        guard sessions.created.contains(session), !(sessions.held[session]?.isEmpty ?? true),
            !sessions.flushing.contains(session)
        else { return false }
        self[bundleId].flushing.insert(session)
        return true
    }

    /// The next held event to hand over, taken off the queue, while the process has the session.
    mutating func nextHeld(_ session: String, of bundleId: String) -> HeldTransferEvent? {
        guard self[bundleId].created.contains(session), let next = self[bundleId].held[session]?.first else {
            return nil
        }
        self[bundleId].held[session]?.removeFirst()
        return next
    }

    mutating func endFlush(_ session: String, of bundleId: String) { self[bundleId].flushing.remove(session) }

    /// A relaunch is to announce `session` once the app connects.
    mutating func announceAfterLaunch(_ session: String, of bundleId: String) {
        self[bundleId].toAnnounce.insert(session)
    }

    /// The sessions a relaunch was for, in order, each taken once.
    mutating func takeSessionsToAnnounce(of bundleId: String) -> [String] {
        defer { self[bundleId].toAnnounce.removeAll() }
        return self[bundleId].toAnnounce.sorted()
    }

    /// The app owes `handleEventsForBackgroundURLSession`'s handler for `session`: the completion id,
    /// if it does.
    func handler(for session: String, of bundleId: String) -> Int? { self[bundleId].handlers[session] }

    mutating func owe(_ completionId: Int, for session: String, of bundleId: String) {
        self[bundleId].handlers[session] = completionId
    }

    /// The app called the handler `completionId`: its session, if the handler was owed.
    mutating func paid(_ completionId: Int, by bundleId: String) -> String? {
        guard let session = self[bundleId].handlers.first(where: { $0.value == completionId })?.key else { return nil }
        self[bundleId].handlers[session] = nil
        return session
    }

    /// The handler's watchdog fired: whether it was still owed (it is not any more).
    mutating func expire(_ session: String, of bundleId: String) -> Bool {
        self[bundleId].handlers.removeValue(forKey: session) != nil
    }

    /// Whether the app owes a session's handler (then it is not suspended).
    func owesHandler(_ bundleId: String) -> Bool { !self[bundleId].handlers.isEmpty }

    /// Whether an announced session has nothing left to hand over: `urlSessionDidFinishEvents` is due.
    func isDone(_ session: String, of bundleId: String) -> Bool {
        let sessions = self[bundleId]
        return sessions.handlers[session] != nil && (sessions.held[session]?.isEmpty ?? true)
            && !sessions.flushing.contains(session) && (sessions.running[session]?.isEmpty ?? true)
    }

    /// The app's process ended: its sessions and owed handlers went with it (held events stay for the
    /// next one). The sessions whose handlers were owed.
    mutating func processExited(_ bundleId: String) -> [String] {
        let owed = self[bundleId].handlers.keys.sorted()
        self[bundleId].handlers.removeAll()
        self[bundleId].created.removeAll()
        return owed
    }

    /// Run's end: every held event, taken, so that files held for an app that never came back are let go.
    mutating func takeAllHeld() -> [HeldTransferEvent] {
        var all: [HeldTransferEvent] = []
        for bundleId in apps.keys {
            all += apps[bundleId]?.held.values.flatMap { $0 } ?? []
            apps[bundleId]?.held.removeAll()
        }
        return all
    }

    /// The app was deleted: nothing of its sessions is kept.
    mutating func forget(_ bundleId: String) { apps[bundleId] = nil }

    /// The resume rate limiter: when a task created in the background may start, and the delay in force.
    func startOfTaskCreated(by bundleId: String, at now: Duration) -> (start: Duration, delay: Duration)? {
        let limiter = self[bundleId].rateLimiter
        return limiter.startOfTaskCreated(at: now).map { ($0, limiter.currentDelay) }
    }

    /// The app was woken in the background for its sessions (the limiter's delay grows).
    mutating func wokeForSessions(_ bundleId: String, at now: Duration) { self[bundleId].rateLimiter.wake(at: now) }

    /// The app came to the foreground: the limiter starts over.
    mutating func resetRateLimiter(_ bundleId: String) { self[bundleId].rateLimiter.reset() }
}
