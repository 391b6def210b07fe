/// One kind of timeline event as users see it: its name, the component that publishes it, its attributes
/// and what it means. ``EventCatalogue/all`` lists every kind the harness publishes; docs/event-kinds.md is
/// generated from it (``EventCatalogue/markdown()``), and tests check published events against it.
public struct EventSpec: Sendable, Equatable {
    /// The event's name, such as `apns.delivered`.
    public var kind: EventKind
    /// The component that publishes it: `harness`, `parse`, `apns`, `device`, `app`, `transfer` or `media`.
    public var source: String
    /// Attributes every such event carries.
    public var attributes: [String]
    /// Attributes it carries only sometimes.
    public var optional: [String]
    /// What happened, in a line, for someone writing expectations.
    public var meaning: String

    /// An entry; `optional` lists the attributes only some events of the kind carry.
    public init(kind: EventKind, source: String, attributes: [String], optional: [String] = [], meaning: String) {
        self.kind = kind
        self.source = source
        self.attributes = attributes
        self.optional = optional
        self.meaning = meaning
    }
}

/// Every kind of event the harness's components publish, with the attributes they carry.
public enum EventCatalogue {
    /// Every kind, grouped by source in the order a push travels: harness, parse, apns, device, app,
    /// transfer, media.
    public static let all: [EventSpec] =
        [
            // harness
            EventSpec(
                kind: .runStarted, source: "harness", attributes: ["scenario"],
                meaning: "A scenario run began: the first event of every run."),
            EventSpec(
                kind: .serviceStarted, source: "harness", attributes: ["service", "url"], optional: ["throttle"],
                meaning:
                    "A fake service (`service`: apns, media or parse) listens at `url`; media gives its `throttle`."),
            EventSpec(
                kind: EventKind("harness.leftover.removed"), source: "harness", attributes: ["path"],
                meaning: "A device socket left behind by an earlier run whose process is gone was deleted."),
            EventSpec(
                kind: .teardownStuck, source: "harness", attributes: ["part", "after"],
                meaning:
                    "At the end of a run, a service (`part`: device, push channel, parse, media or apns) did not stop within `after` and was left for the process's exit; a defect in the harness worth reporting."
            ),
            EventSpec(
                kind: .serviceLimitReached, source: "harness", attributes: ["service", "limit"],
                optional: ["client", "proxy"],
                meaning:
                    "A listener's limit was reached (`service`: parse, apns.control, media.control, media or proxy, with the fault proxy's `proxy` named; `limit`: such as `1024 connections` or `100 header fields`); docs/limits.md says what the client gets."
            ),
            EventSpec(
                kind: .stepStarted, source: "harness", attributes: ["step"],
                meaning: "A scenario step began; `step` is the step as written, e.g. `launch nasa-tv`."),
            EventSpec(
                kind: .runFinished, source: "harness", attributes: ["scenario", "outcome"],
                meaning: "The run ended (`outcome`: PASS, FAIL, INTERRUPTED or ERROR): the last event of a run."),

        ] + backends + parse + [
            // apns
            EventSpec(
                kind: .apnsConnectionRefused, source: "apns", attributes: ["client", "why"],
                meaning:
                    "A provider connection was closed as it opened: `maxConnections` connections were already open."),
            EventSpec(
                kind: .apnsConnectionClosed, source: "apns", attributes: ["client", "why"], optional: ["after"],
                meaning:
                    "FakeAPNs closed a provider connection: its TLS handshake did not finish within `after`, or the client broke the protocol (`why`: the error, such as a header list over 16 KB)."
            ),
            EventSpec(
                kind: .apnsDeviceRegistered, source: "apns", attributes: ["deviceToken", "topic", "environment"],
                optional: ["device"],
                meaning:
                    "APNs issued a device token for an app (`topic`: its bundle ID). On a scenario's named device every `apns.*` event about its token names it (`device`)."
            ),
            EventSpec(
                kind: EventKind("apns.device.unregistered"), source: "apns", attributes: ["deviceToken", "timestamp"],
                optional: ["device"],
                meaning: "The app was deleted: pushes to the token now get 410 Unregistered with `timestamp` (ms)."),
            EventSpec(
                kind: EventKind("apns.device.online"), source: "apns", attributes: ["deviceToken"],
                optional: ["device"],
                meaning: "The device is reachable again; the pushes APNs stored for it are delivered now."),
            EventSpec(
                kind: EventKind("apns.device.offline"), source: "apns", attributes: ["deviceToken"],
                optional: ["device"],
                meaning: "The device went off the network; APNs stores its pushes instead of delivering them."),
            EventSpec(
                kind: EventKind("apns.request.malformed"), source: "apns", attributes: ["stream", "problem"],
                meaning: "A request's HTTP/2 header block broke the protocol's rules; its stream was reset, unanswered."
            ),
            EventSpec(
                kind: .apnsAccepted, source: "apns",
                attributes: ["apnsId", "deviceToken", "topic", "pushType", "priority", "environment", "payload"],
                optional: ["device"],
                meaning: "APNs accepted a provider's push and answered 200; `payload` is its JSON body."),
            EventSpec(
                kind: .apnsRejected, source: "apns", attributes: ["apnsId", "path", "status", "reason"],
                meaning: "APNs refused a provider request with `status` and `reason`, e.g. 400 BadDeviceToken."),
            EventSpec(
                kind: .apnsDelivered, source: "apns",
                attributes: ["apnsId", "deviceToken", "priority", "stored", "collapseId"], optional: ["device"],
                meaning: "APNs handed a push to the device; `stored` is true if it had waited for the device."),
            EventSpec(
                kind: EventKind("apns.coalesced"), source: "apns", attributes: ["apnsId", "deviceToken", "replacedBy"],
                optional: ["device"],
                meaning: "A low-priority push held for coalescing gave way to a newer one on its topic (`replacedBy`)."),
            EventSpec(
                kind: .apnsStored, source: "apns", attributes: ["apnsId", "deviceToken", "reason"],
                optional: ["collapseId", "device"],
                meaning: "APNs kept a push for a device it cannot reach now (`reason`); it keeps the newest per topic."),
            EventSpec(
                kind: EventKind("apns.replaced"), source: "apns", attributes: ["apnsId", "deviceToken", "replacedBy"],
                optional: ["device"],
                meaning: "A stored push was dropped: a newer one for its device and topic (`replacedBy`) was stored."),
            EventSpec(
                kind: EventKind("apns.expired"), source: "apns", attributes: ["apnsId", "deviceToken", "reason"],
                optional: ["device"],
                meaning: "A stored push was dropped: its `apns-expiration` passed while the device was offline."),
            EventSpec(
                kind: EventKind("apns.discarded"), source: "apns", attributes: ["apnsId", "deviceToken", "reason"],
                optional: ["device"],
                meaning: "An accepted push was dropped undelivered (`reason`: no such device, or expiration 0 or past)."
            ),
        ] + legacyAPNs + [

            // device
            EventSpec(
                kind: EventKind("device.network"), source: "device", attributes: ["network"],
                meaning: "The device's network changed (`network`: wifi, cellular or offline)."),
            EventSpec(
                kind: EventKind("device.locked"), source: "device", attributes: [],
                meaning: "The device was locked; the app on screen went to the background."),
            EventSpec(
                kind: EventKind("device.unlocked"), source: "device", attributes: [],
                meaning: "The device was unlocked; the app that was on screen comes back to the foreground."),
            EventSpec(
                kind: EventKind("device.rebooting"), source: "device", attributes: [],
                meaning: "The device is restarting; every running app is ended."),
            EventSpec(
                kind: EventKind("device.rebooted"), source: "device", attributes: ["locked", "bootLaunchDelay"],
                meaning: "The device is back up, locked; launches for pushes wait `bootLaunchDelay`."),
            EventSpec(
                kind: .appLaunched, source: "device", attributes: ["bundleId", "reason", "pid"],
                meaning: "The device started the app's process (`reason`: user, remote-notification, ...)."),
            EventSpec(
                kind: .appConnected, source: "device", attributes: ["bundleId", "pid", "reason"],
                meaning: "The launched app connected to the device socket and its hello was accepted."),
            EventSpec(
                kind: .appHandshakeFailed, source: "device", attributes: ["bundleId", "reason"], optional: ["pid"],
                meaning: "The device refused an app's hello, or got none in time (`reason`); its launch fails."),
            EventSpec(
                kind: EventKind("device.app.launchFailed"), source: "device",
                attributes: ["bundleId", "reason", "error"],
                meaning: "A background launch (for a push or a background session) failed; `error` says why."),
            EventSpec(
                kind: .appStateChanged, source: "device", attributes: ["bundleId", "state", "detail"],
                meaning: "The app's lifecycle state changed (`state`: notRunning, launching, active, background, ...)."),
            EventSpec(
                kind: .lifecycleRefused, source: "device", attributes: ["bundleId", "state", "event", "why"],
                meaning:
                    "SpringBoard's state machine refused a move the device itself attempted (`event` in `state`): the app's state stays as it was. The device never should; the event is there so that a slip shows."
            ),
            EventSpec(
                kind: .appExited, source: "device", attributes: ["bundleId", "cause", "termination"],
                meaning: "The app's process ended (`cause`: exited, crashed, watchdog, forceQuit, ...)."),
            EventSpec(
                kind: EventKind("device.app.uninstalled"), source: "device", attributes: ["bundleId", "deviceToken"],
                meaning: "The user deleted the app: its container is gone and APNs unregisters its token."),
            EventSpec(
                kind: .pushReceived, source: "device",
                attributes: ["bundleId", "apnsId", "appState", "decision", "payload"],
                meaning: "A push reached the device; `decision` is what iOS does with it in the app's state."),
            EventSpec(
                kind: .pushWarning, source: "device", attributes: ["bundleId", "apnsId", "warning"],
                meaning:
                    "A push whose shape Apple warns about reached the device (a silent push not sent as `background` at priority 5): it is handled as usual, and the verdict repeats the warning."
            ),
            EventSpec(
                kind: .pushDelivered, source: "device", attributes: ["bundleId", "completionId", "wake"],
                meaning: "The app got a remote notification (`wake`: foreground, background, resumed or launched)."),
            EventSpec(
                kind: .pushHeld, source: "device", attributes: ["bundleId", "apnsId", "completionId", "reason"],
                optional: ["until"],
                meaning: "A background push was held back by the boot delay or the wake budget; `until`: for how long."),
            EventSpec(
                kind: .pushDiscarded, source: "device", attributes: ["bundleId", "apnsId", "completionId", "reason"],
                meaning: "A held push was dropped (`reason`): a newer one replaced it, or the app was killed."),
            EventSpec(
                kind: .pushUnreadable, source: "device", attributes: ["apnsId", "topic", "error"],
                meaning:
                    "FakeAPNs delivered a notification whose payload is no JSON object (its validation let it through): the device did not receive it."
            ),
            EventSpec(
                kind: .pushReleased, source: "device", attributes: ["bundleId", "apnsId", "completionId", "why"],
                meaning: "A held push was let through (`why`): the budget allows a wake, or the user opened the app."),
            EventSpec(
                kind: .watchdogKilled, source: "device", attributes: ["bundleId", "reason"],
                optional: ["identifier", "completionId", "budget"],
                meaning: "The app was killed for not calling a completion handler or `endBackgroundTask` in time."),
            EventSpec(
                kind: .backgroundTaskBegan, source: "device", attributes: ["bundleId", "identifier", "name"],
                meaning: "The app called `beginBackgroundTask`; it keeps running in the background for a while."),
            EventSpec(
                kind: .backgroundTaskEnded, source: "device", attributes: ["bundleId", "identifier", "name"],
                meaning: "The app called `endBackgroundTask` for an open task."),
            EventSpec(
                kind: .backgroundTaskExpired, source: "device",
                attributes: ["bundleId", "identifier", "name", "allowance"],
                meaning: "A background task's `allowance` ran out; the app's expiration handler is called."),
            EventSpec(
                kind: .fetchStarted, source: "device", attributes: ["bundleId", "completionId", "wake"],
                meaning: "The app got `performFetchWithCompletionHandler` (`wake`: background, resumed, launched)."),
            EventSpec(
                kind: .fetchSkipped, source: "device", attributes: ["bundleId", "reason"],
                meaning: "The system ran no background fetch for the app (`reason`)."),
            EventSpec(
                kind: .notificationScheduled, source: "device",
                attributes: ["bundleId", "identifier", "fireIn", "replaced", "pending"],
                meaning: "A UserNotifications request waits for its trigger, `fireIn` from now."),
            EventSpec(
                kind: .notificationDiscarded, source: "device", attributes: ["bundleId", "identifier", "reason"],
                meaning: "A pending notification request was dropped: removed by the app, or beyond the 64 kept."),
            EventSpec(
                kind: .notificationShown, source: "device",
                attributes: ["bundleId", "identifier", "body", "replaced", "shownCount"],
                optional: ["title"],
                meaning: "Notification Center shows a notification; `replaced` is true if it took an older one's place."
            ),
            EventSpec(
                kind: .notificationTapped, source: "device", attributes: ["bundleId", "identifier", "body"],
                meaning: "The user tapped the app's newest notification; it left Notification Center."),
            EventSpec(
                kind: EventKind("device.ui.tapped"), source: "device", attributes: ["bundleId", "button"],
                meaning: "The user tapped a button, named by its label, on the app's screen."),
            EventSpec(
                kind: EventKind("device.ui.typed"), source: "device", attributes: ["bundleId", "field", "text"],
                meaning: "The user typed `text` into the app's field named `field` (the field's whole content)."),
            EventSpec(
                kind: .sessionHandleEvents, source: "device",
                attributes: ["bundleId", "session", "completionId", "wake"],
                meaning: "The app got `handleEventsForBackgroundURLSession` (`wake`: resumed or launched)."),
            EventSpec(
                kind: .sessionEvent, source: "device", attributes: ["bundleId", "session", "task", "event", "held"],
                optional: ["code", "cancelledReason"],
                meaning: "A transfer's delegate call was handed to the app; `held` is true if it waited for the app."),
            EventSpec(
                kind: .sessionDidFinishEvents, source: "device", attributes: ["bundleId", "session"],
                meaning: "The app got `urlSessionDidFinishEvents`: the session has nothing more to deliver."),
            EventSpec(
                kind: .sessionHandlerNotCalled, source: "device",
                attributes: ["bundleId", "session", "budget", "reason"],
                meaning: "The app did not call the completion handler of `handleEventsForBackgroundURLSession` in time."
            ),

            // app
            EventSpec(
                kind: .appRegisteredForPush, source: "app", attributes: ["bundleId", "deviceToken"],
                meaning: "The app registered for remote notifications and got `deviceToken`."),
            EventSpec(
                kind: .appFetchCompleted, source: "app", attributes: ["bundleId", "completionId", "result"],
                meaning: "The app called a push or fetch completion handler (`result`: newData, noData or failed)."),
            EventSpec(
                kind: .appLocalNotification, source: "app", attributes: ["bundleId", "style", "appState"],
                optional: [
                    "presented", "alertBody", "alertTitle", "identifier", "presentation", "title", "body", "badge",
                ],
                meaning: "The app posted a local notification (`style`: UILocalNotification or UserNotifications)."),
            EventSpec(
                kind: .appSessionEventsCompleted, source: "app", attributes: ["bundleId", "session"],
                meaning: "The app called the completion handler of `handleEventsForBackgroundURLSession`."),
            EventSpec(
                kind: .appLog, source: "app", attributes: ["bundleId", "message"],
                meaning: "The app logged `message` through the device protocol."),
            EventSpec(
                kind: .appUI, source: "app", attributes: ["bundleId"],
                optional: ["screen", "title", "button", "playbackURL"],
                meaning: "The app reported what its screen shows; only the fields it sent are present."),
            EventSpec(
                kind: .appOutput, source: "app", attributes: ["bundleId", "line"],
                meaning: "A line the app's process printed on its standard output or standard error."),

            // transfer
            EventSpec(
                kind: .transferStarted, source: "transfer",
                attributes: ["session", "task", "url", "discretionary", "allowsCellularAccess"],
                optional: ["taskDescription"],
                meaning: "A download task started in the transfer daemon."),
            EventSpec(
                kind: .transferWaiting, source: "transfer", attributes: ["session", "task", "why", "network"],
                optional: ["for"],
                meaning: "The task may not start yet (`why`): the network, the connection limit or the rate limiter."),
            EventSpec(
                kind: .transferUnblocked, source: "transfer", attributes: ["session", "task", "network"],
                optional: ["after"],
                meaning: "A waiting task may go on: the network suits it, or the rate limiter's wait ended (`after`)."),
            EventSpec(
                kind: .transferProgress, source: "transfer", attributes: ["session", "task", "bytes", "expected"],
                meaning: "Bytes written so far, at most every 250 ms and at the end; `expected` is -1 if unknown."),
            EventSpec(
                kind: .transferInterrupted, source: "transfer",
                attributes: ["session", "task", "attempt", "bytes", "expected", "error", "code", "retryIn", "next"],
                optional: ["why"],
                meaning: "An attempt ended early and is retried after `retryIn`; `next` says from where."),
            EventSpec(
                kind: .transferResumed, source: "transfer",
                attributes: ["session", "task", "attempt", "fromByte", "expected"],
                meaning: "A retry continued from `fromByte` with `Range` and `If-Range`, and the server agreed."),
            EventSpec(
                kind: .transferRestarted, source: "transfer", attributes: ["session", "task", "lostBytes", "why"],
                optional: ["attempt"],
                meaning: "The download started over from zero, losing `lostBytes` (`why`)."),
            EventSpec(
                kind: .transferCompleted, source: "transfer",
                attributes: ["session", "task", "bytes", "sha256", "status"],
                meaning: "The whole body was received; `sha256` is the file's digest, `status` the HTTP status."),
            EventSpec(
                kind: .transferFileLost, source: "transfer", attributes: ["session", "task", "reason"],
                meaning: "The downloaded file was deleted: the app did not move it in `didFinishDownloadingTo`."),
            EventSpec(
                kind: .transferFailed, source: "transfer",
                attributes: ["session", "task", "code", "error", "resumeData"],
                optional: ["cancelledReason"],
                meaning: "The task gave up or was cancelled (`code`, e.g. -999); `resumeData` says if it can go on."),

            // media
            EventSpec(
                kind: EventKind("media.fault.added"), source: "media", attributes: ["id", "fault", "path"],
                meaning: "A fault rule was added through the control API (`path` `*` matches every path)."),
            EventSpec(
                kind: EventKind("media.settings.changed"), source: "media",
                attributes: ["throttle", "serverThrottle", "latency", "firstByteDelay"],
                meaning: "The throttles, latency or first-byte delay were changed through the control API."),
            EventSpec(
                kind: .mediaRequest, source: "media", attributes: ["method", "path", "status"], optional: ["range"],
                meaning: "The media server answered a request with `status`; `range` is its Range header."),
            EventSpec(
                kind: .mediaFault, source: "media", attributes: ["fault", "path"], optional: ["status", "by"],
                meaning: "A fault rule matched a request and changes its response (`fault`)."),
            EventSpec(
                kind: .mediaFaultFired, source: "media", attributes: ["fault", "path", "atByte", "of", "how"],
                meaning: "A fault ended a body at `atByte` of `of` bytes (`how`: FIN, RST or stall)."),
            EventSpec(
                kind: .mediaResponseFinished, source: "media", attributes: ["path", "bytes"],
                meaning: "The media server sent a whole response: `bytes` body bytes."),
            EventSpec(
                kind: .mediaNotRecorded, source: "media", attributes: ["method", "path", "nearest"],
                meaning:
                    "Serving from a cassette, a request it does not hold got the not-recorded answer; `nearest` is the recorded request most like it."
            ),
            EventSpec(
                kind: .mediaAccessLogFailed, source: "media", attributes: ["path", "bytes", "error"],
                meaning:
                    "The access log's file refused a write (a full disk, say): its last `bytes` bytes of lines are not in it."
            ),
            EventSpec(
                kind: .mediaRequestTimedOut, source: "media", attributes: ["client", "after"],
                meaning: "A connection sent no complete request within `after` and was closed."),

        ] + proxy + network

    private static let byKind: [EventKind: EventSpec] = Dictionary(
        all.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })

    /// The catalogue's entry for `kind`; nil for a kind no component publishes.
    public static func spec(for kind: EventKind) -> EventSpec? { byKind[kind] }

    /// What each source's section of the page says about the component.
    static let sourceDescriptions: [String: String] = [
        "harness": "The harness itself: the run, its services and its steps.",
        "backend":
            "The servers under test that harness.yml's `backends` start beside the fakes: their process, readiness and output.",
        "parse": "FakeParse: the Parse Server the app saves its installation to, and the pushes sent through it.",
        "apns": "FakeAPNs: provider connections and requests, devices, and what becomes of each accepted push.",
        "device": "The simulated iOS device: SpringBoard, pushes, background time, notifications and sessions.",
        "app": "The app under test, as it reports itself through the device protocol, and what its process prints.",
        "transfer": "The device's transfer daemon: one download task each; every event carries `session` and `task`.",
        "media": "MediaServer: the HTTP server files are downloaded from, and its control API.",
        "proxy":
            "The fault proxy: TCP proxies with Toxiproxy's toxics, driven through its Toxiproxy-compatible API.",
    ]

    /// Attributes a timeline view adds to every event published through it (`Timeline.stamping`), on
    /// top of the kind's own: `device`, the name of one of a scenario's several devices.
    public static let stampedAttributes: Set<String> = ["device"]
}
