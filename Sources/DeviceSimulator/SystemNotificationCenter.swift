import DeviceProtocol

/// A notification in Notification Center.
struct ShownNotification: Sendable, Equatable {
    var bundleId: String
    var identifier: String
    var title: String?
    var body: String
    var userInfo: [String: JSONValue]
}

/// The system's side of notifications (docs/ios-rules.md 1.4), for every app: what Notification Center
/// shows, the requests waiting for their trigger, the badges, and the tap an app has still to receive.
/// A value: the device runs the triggers' timers and talks to the apps; this keeps the rules.
struct SystemNotificationCenter {
    /// What Notification Center shows, oldest first.
    private(set) var shown: [ShownNotification] = []
    /// Requests waiting for their trigger, by app and identifier, with when they fire (policy time).
    private var pending: [String: [String: (request: NotificationRequestParams, fireAt: Duration)]] = [:]
    private var badges: [String: Int] = [:]
    /// A tap on a notification, for the app to receive once it is on screen.
    private var responses: [String: NotificationParams] = [:]

    /// "The system keeps the soonest-firing 64 notifications and discards the rest."
    static let mostPending = 64

    /// Shows `notification`; one with the identifier of a shown one of the same app (an
    /// `apns-collapse-id`, a request identifier) replaces it. Whether it replaced one.
    mutating func show(_ notification: ShownNotification) -> Bool {
        let index = shown.firstIndex {
            $0.bundleId == notification.bundleId && $0.identifier == notification.identifier
        }
        if let index { shown.remove(at: index) }
        shown.append(notification)
        return index != nil
    }

    /// Schedules a request to fire at `fireAt`, replacing a pending one with its identifier; whether it
    /// replaced one, and the identifiers of the latest-firing requests beyond ``mostPending``, discarded.
    mutating func schedule(_ request: NotificationRequestParams, for bundleId: String, fireAt: Duration)
        -> (replaced: Bool, discarded: [String])
    {
        let replaced = pending[bundleId, default: [:]].updateValue((request, fireAt), forKey: request.identifier) != nil
        let requests = pending[bundleId] ?? [:]
        guard requests.count > Self.mostPending else { return (replaced, []) }
        let latest = requests.sorted { ($0.value.fireAt, $0.key) < ($1.value.fireAt, $1.key) }
            .dropFirst(Self.mostPending).map(\.key)
        for identifier in latest { pending[bundleId]?[identifier] = nil }
        return (replaced, latest)
    }

    /// A request that will not fire after all (replaced by one firing now, or removed): whether it was pending.
    @discardableResult
    mutating func unschedule(_ identifier: String, of bundleId: String) -> Bool {
        pending[bundleId]?.removeValue(forKey: identifier) != nil
    }

    /// A request's trigger fired: the request, if it was still pending.
    mutating func fire(_ identifier: String, of bundleId: String) -> NotificationRequestParams? {
        pending[bundleId]?.removeValue(forKey: identifier)?.request
    }

    func pendingCount(of bundleId: String) -> Int { pending[bundleId]?.count ?? 0 }

    func badge(of bundleId: String) -> Int { badges[bundleId] ?? 0 }

    mutating func setBadge(_ badge: Int, of bundleId: String) { badges[bundleId] = badge }

    /// The user taps the app's newest shown notification: it leaves Notification Center, and its
    /// response waits for the app. Nil when the app has nothing shown.
    mutating func tapNewest(of bundleId: String) -> ShownNotification? {
        guard let index = shown.lastIndex(where: { $0.bundleId == bundleId }) else { return nil }
        let notification = shown.remove(at: index)
        responses[bundleId] = NotificationParams(
            identifier: notification.identifier, title: notification.title, body: notification.body,
            userInfo: notification.userInfo, actionIdentifier: "com.apple.UNNotificationDefaultActionIdentifier")
        return notification
    }

    /// The tap waiting for the app, handed over once.
    mutating func takeResponse(of bundleId: String) -> NotificationParams? { responses.removeValue(forKey: bundleId) }

    /// The app was deleted: what it showed, scheduled and was owed goes with it.
    mutating func forget(_ bundleId: String) {
        shown.removeAll { $0.bundleId == bundleId }
        pending[bundleId] = nil
        badges[bundleId] = nil
        responses[bundleId] = nil
    }
}
