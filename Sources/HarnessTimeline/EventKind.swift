/// The name of a kind of timeline event, such as `apns.delivered`.
///
/// A struct over a string rather than an enum so that later components can add kinds without touching
/// this module, while the well-known ones stay discoverable as static members.
public struct EventKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension EventKind {
    // harness
    public static let runStarted: EventKind = "harness.run.started"
    public static let serviceStarted: EventKind = "harness.service.started"
    public static let stepStarted: EventKind = "harness.step.started"
    public static let runFinished: EventKind = "harness.run.finished"

    // FakeParse
    public static let parseInstallationSaved: EventKind = "parse.installation.saved"
    public static let parsePushAccepted: EventKind = "parse.push.accepted"
    public static let parsePushSent: EventKind = "parse.push.sent"
    public static let parsePushFailed: EventKind = "parse.push.failed"
    /// The push's `_PushStatus` once every installation was tried (`status`, `numSent`, `numFailed`).
    public static let parsePushStatus: EventKind = "parse.push.status"
    public static let parsePushScheduled: EventKind = "parse.push.scheduled"
    public static let parseStoreFailed: EventKind = "parse.store.failed"

    // FakeAPNs
    public static let apnsDeviceRegistered: EventKind = "apns.device.registered"
    /// `deliveryCommand` ran for a delivered notification (`status`, `output`).
    public static let apnsDeliveryCommand: EventKind = "apns.delivery.command"
    public static let apnsAccepted: EventKind = "apns.request.accepted"
    public static let apnsRejected: EventKind = "apns.request.rejected"
    public static let apnsDelivered: EventKind = "apns.delivered"
    public static let apnsStored: EventKind = "apns.stored"
    /// A provider connection FakeAPNs closed (`client`, `why`: a handshake timeout, a protocol error).
    public static let apnsConnectionClosed: EventKind = "apns.connection.closed"
    /// A provider connection closed as it opened: the listener has `maxConnections` open (`client`, `why`).
    public static let apnsConnectionRefused: EventKind = "apns.connection.refused"
    /// The legacy binary gateway answered with an error response and closed the connection (`status`,
    /// `name`, `identifier`).
    public static let apnsLegacyRefused: EventKind = "apns.legacy.refused"
    /// A legacy gateway connection ended in the middle of a command (`client`, `bytes` left unread).
    public static let apnsLegacyTruncated: EventKind = "apns.legacy.truncated"
    /// A provider read the feedback service (`topic`, `count`, `tokens`).
    public static let apnsFeedbackRead: EventKind = "apns.feedback.read"
    // Backends under test
    /// A backend's process started (`backend`, `pid`, `command`).
    public static let backendStarted: EventKind = "backend.started"
    /// A backend is ready (`backend`, `how`: its readiness, `after`).
    public static let backendReady: EventKind = "backend.ready"
    /// A line a backend printed (`backend`, `line`).
    public static let backendOutput: EventKind = "backend.output"
    /// A backend's process ended (`backend`, `how`).
    public static let backendExited: EventKind = "backend.exited"
    /// The harness stopped a backend (`backend`, `how` it ended).
    public static let backendStopped: EventKind = "backend.stopped"
    /// A part of the run's services did not stop within the teardown's limit and was left behind
    /// (`part`: device, parse, media or apns; `after`).
    public static let teardownStuck: EventKind = "harness.teardown.stuck"
    /// A client reached one of a listener's limits (`service`, `limit`, sometimes `client`).
    public static let serviceLimitReached: EventKind = "service.limit.reached"

    // DeviceSimulator
    public static let appLaunched: EventKind = "device.app.launched"
    public static let appConnected: EventKind = "device.app.connected"
    /// The device refused an app's handshake (`bundleId`, `pid`, `reason`); its launch fails at once.
    public static let appHandshakeFailed: EventKind = "device.app.handshakeFailed"
    public static let appStateChanged: EventKind = "device.app.state"
    public static let lifecycleRefused: EventKind = "device.app.lifecycleRefused"
    public static let appExited: EventKind = "device.app.exited"
    public static let appOutput: EventKind = "device.app.output"
    public static let pushReceived: EventKind = "device.push.received"
    /// A push whose shape Apple warns about (a silent push not sent as background at priority 5).
    public static let pushWarning: EventKind = "device.push.warning"
    public static let pushDelivered: EventKind = "device.push.delivered"
    /// A notification the gateway delivered whose payload is no JSON object (`apnsId`, `error`): not received.
    public static let pushUnreadable: EventKind = "device.push.unreadable"
    /// A background push held back by the settings or the budget (`reason`, `until`): docs/ios-rules.md P10, P11.
    public static let pushHeld: EventKind = "device.push.held"
    /// A held push dropped (`reason`: a newer one replaced it, or the app was killed): P7, P9.
    public static let pushDiscarded: EventKind = "device.push.discarded"
    /// A held push let through (`why`: the budget allows it again, or the user opened the app): P8.
    public static let pushReleased: EventKind = "device.push.released"
    public static let watchdogKilled: EventKind = "device.watchdog.killed"
    /// `beginBackgroundTask` (`identifier`, `name`), `endBackgroundTask`, and a task whose time ran out.
    public static let backgroundTaskBegan: EventKind = "device.backgroundTask.began"
    public static let backgroundTaskEnded: EventKind = "device.backgroundTask.ended"
    public static let backgroundTaskExpired: EventKind = "device.backgroundTask.expired"
    /// `performFetchWithCompletionHandler` called (`completionId`, `wake`: background, resumed, launched).
    public static let fetchStarted: EventKind = "device.fetch.started"
    /// The system ran no background fetch (`reason`).
    public static let fetchSkipped: EventKind = "device.fetch.skipped"
    public static let transferStarted: EventKind = "transfer.started"
    public static let transferProgress: EventKind = "transfer.progress"
    public static let transferCompleted: EventKind = "transfer.completed"
    public static let transferFailed: EventKind = "transfer.failed"
    /// An attempt of a background task ended early; it will be retried (`next`: `resume from byte N`,
    /// `restart from zero` with `why`, or `start`).
    public static let transferInterrupted: EventKind = "transfer.interrupted"
    /// A task may not use the device's network yet (`why`, `network`): discretionary and waiting for
    /// Wi-Fi, no cellular access, or no network at all.
    public static let transferWaiting: EventKind = "transfer.waiting"
    /// The network now suits a waiting task (`network`); it starts or resumes.
    public static let transferUnblocked: EventKind = "transfer.unblocked"
    /// A retry continued from where the last attempt stopped (`fromByte`), with `Range` and `If-Range`.
    public static let transferResumed: EventKind = "transfer.resumed"
    /// A retry started the file over, losing `lostBytes`, and `why`.
    public static let transferRestarted: EventKind = "transfer.restarted"
    public static let transferFileLost: EventKind = "transfer.file.lost"
    /// A transfer's delegate event handed to the app (`event`: `didFinishDownloadingTo` or
    /// `didCompleteWithError`, with `code` and `cancelledReason`; `held`: it waited for the app).
    public static let sessionEvent: EventKind = "device.session.event"
    /// `handleEventsForBackgroundURLSession` (`session`, `wake`: `resumed` or `launched`).
    public static let sessionHandleEvents: EventKind = "device.session.handleEvents"
    /// `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
    public static let sessionDidFinishEvents: EventKind = "device.session.didFinishEvents"
    /// The app did not call the completion handler of `handleEventsForBackgroundURLSession` in time.
    public static let sessionHandlerNotCalled: EventKind = "device.session.handlerNotCalled"

    // the app under test, as reported through the device protocol
    public static let appRegisteredForPush: EventKind = "app.registeredForRemoteNotifications"
    public static let appLocalNotification: EventKind = "app.localNotification"
    /// A notification request waits for its trigger (`identifier`, `fireIn`, `pending`).
    public static let notificationScheduled: EventKind = "device.notification.scheduled"
    /// A pending request dropped (`reason`: removed, or beyond the 64 the system keeps).
    public static let notificationDiscarded: EventKind = "device.notification.discarded"
    /// Notification Center shows a notification (`identifier`, `body`, `replaced`).
    public static let notificationShown: EventKind = "device.notification.shown"
    /// The user tapped a shown notification.
    public static let notificationTapped: EventKind = "device.notification.tapped"
    public static let appFetchCompleted: EventKind = "app.fetchCompleted"
    /// The app called the completion handler of `handleEventsForBackgroundURLSession`.
    public static let appSessionEventsCompleted: EventKind = "app.sessionEventsCompleted"
    public static let appLog: EventKind = "app.log"
    /// What the app's screen shows (`screen`, `title`, `button`, `playbackURL`), as the app reports it.
    public static let appUI: EventKind = "app.ui"

    // MediaServer
    public static let mediaRequest: EventKind = "media.request"
    public static let mediaResponseFinished: EventKind = "media.response.finished"
    /// A connection sent no complete request in time and was closed (`client`, `after`).
    public static let mediaRequestTimedOut: EventKind = "media.request.timedOut"
    /// A fault rule matched a request (`fault`, `path`).
    public static let mediaFault: EventKind = "media.fault"
    /// A fault ended a body early (`fault`, `path`, `atByte`, `of`, `how`: FIN, RST or stall).
    public static let mediaFaultFired: EventKind = "media.fault.fired"
    /// Replaying a cassette, the media server was asked for something the cassette does not hold.
    public static let mediaNotRecorded: EventKind = "media.notRecorded"
    /// The access log's file refused a write (`path`, `bytes` not written, `error`).
    public static let mediaAccessLogFailed: EventKind = "media.accessLog.failed"

    // FaultProxy
    public static let proxyCreated: EventKind = "proxy.created"
    public static let proxyUpdated: EventKind = "proxy.updated"
    public static let proxyDeleted: EventKind = "proxy.deleted"
    public static let proxyToxicAdded: EventKind = "proxy.toxic.added"
    public static let proxyToxicUpdated: EventKind = "proxy.toxic.updated"
    public static let proxyToxicRemoved: EventKind = "proxy.toxic.removed"
    /// A client was accepted and closed: the proxy's upstream could not be reached (`why`).
    public static let proxyUpstreamRefused: EventKind = "proxy.upstream.refused"
    /// A toxic ended a connection (`how`: FIN or RST) after `atByte` bytes in its `stream`.
    public static let proxyConnectionCut: EventKind = "proxy.connection.cut"
    /// An `http_status` toxic answered a request in the server's place (`status`).
    public static let proxyHTTPAnswered: EventKind = "proxy.http.answered"
}
