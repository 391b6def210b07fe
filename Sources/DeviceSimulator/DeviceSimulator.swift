import DeviceProtocol
import Foundation
import HarnessTimeline
import Logging
import NIOCore
import NIOPosix
import Processes
import PushChannel
import ServiceLifecycle

/// Plays iOS for the apps under test: SpringBoard (processes and their states), apsd (silent-push
/// wake rules and the 30 s budget), nsurlsessiond (the ``TransferDaemon``) and the notification centre.
///
/// Apps connect to ``DeviceConfiguration/socketPath`` and speak device protocol v1. Every decision is
/// published to the timeline.
public actor DeviceSimulator {
    public internal(set) var configuration: DeviceConfiguration
    let timeline: Timeline
    let pushRegistry: any PushRegistry
    let transferDaemon: TransferDaemon
    let logger: Logger
    var apps: [String: AppRecord] = [:]
    /// Connections that have not said hello yet, by the pid of the process that opened them.
    var peersBeforeHello: [ObjectIdentifier: pid_t] = [:]
    /// Why the device refused the handshake of an app still launching, by bundle id.
    var refusedHandshakes: [String: String] = [:]
    /// Set when ``shutdown()`` begins: transfer events that finish during it reach no app.
    var shuttingDown = false
    /// The device's work that outlives the call starting it (a process's exit to record, a relaunch, a
    /// notification to post, held events to hand over): ``shutdown()`` cancels what is left and waits.
    let work = OwnedTasks()
    var nextCompletionId = 1
    /// `wifi`, `cellular` or `offline`.
    public private(set) var network = "wifi"
    /// Notification Center, pending notification requests, badges and taps (``SystemNotificationCenter``).
    var notifications = SystemNotificationCenter()
    var listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>?
    /// The screen is locked: nothing can come to the foreground until `unlock`.
    var locked = false
    /// The app that was on screen when the device locked; it returns on unlock.
    var onScreenBeforeLock: String?
    /// When the device last rebooted (policy time); launches for pushes wait `bootLaunchDelay` after it.
    var bootedAt: Duration?
    /// Every policy timer runs on this clock.
    let clock: PolicyClock
    /// Every policy timer there is: suspensions, watchdogs, held-push releases, background time,
    /// notification triggers (``PolicyTimers``).
    var timers = PolicyTimers()
    /// The apps' open background tasks (`beginBackgroundTask`).
    var backgroundTasks = BackgroundTasks()
    /// The apps' URL sessions, their held events and owed handlers (``SessionEventRouter``).
    var sessions: SessionEventRouter
    /// The apps' push budgets, held pushes, owed completion handlers and fetch state (``PushService``).
    var pushes: PushService

    /// The policy clock's reading.
    var policyNow: Duration { clock.now }

    public init(
        configuration: DeviceConfiguration, timeline: Timeline, pushRegistry: any PushRegistry,
        logger: Logger = Logger(label: "device")
    ) {
        self.configuration = configuration
        self.timeline = timeline
        self.pushRegistry = pushRegistry
        self.clock = PolicyClock(timeScale: configuration.timeScale)
        self.sessions = SessionEventRouter(launchDelay: configuration.sessionLaunchDelay)
        self.pushes = PushService(policy: configuration.pushPolicy)
        self.transferDaemon = TransferDaemon(timeline: timeline, policy: configuration.transfers, clock: clock)
        self.logger = logger
    }

    /// Binds the device socket. Call before launching apps; ``serve()`` then accepts their connections.
    public func bind() async throws {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: configuration.socketPath, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        self.listener = listener
    }

    /// Accepts app connections until cancelled; then kills every app and stops the transfer daemon.
    public func serve() async throws {
        guard let listener else { throw DeviceError.socketNotBound }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                // An error of the listener itself ends accepting, as its closing does: either way, no more.
                try? await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.handleConnection(connection) }
                    }
                }
            }
        } onCancel: {
            listener.channel.close(promise: nil)
        }
    }

    /// SIGKILLs every app process there is, waiting for nothing: the last resort when ``shutdown()``
    /// does not finish.
    public func killAppProcesses() {
        for record in apps.values { record.process?.kill() }
    }

    /// Kills every app process and stops background transfers; launches nothing more. Once: a later
    /// call (the device's `run()` ending after a run stopped the apps first) returns at once.
    public func shutdown() async {
        guard !shuttingDown else { return }
        shuttingDown = true
        timers.cancelAll()
        for bundleId in apps.keys where apps[bundleId]?.process != nil {
            // Waits until the exit is recorded (device.app.exited on the timeline), not only until the
            // process is gone: the run's timeline ends after this.
            await withCheckedContinuation { exited in
                apps[bundleId]?.exitWaiters.append(exited)
                if apps[bundleId]?.killCause == nil { apps[bundleId]?.killCause = .exited }
                apps[bundleId]?.process?.kill()
            }
        }
        releaseHeldEvents()
        await transferDaemon.shutdown()
        await work.cancelAllAndWait()
        // serve() owns the listener and ends when it has closed.
        listener?.channel.close(promise: nil)
        // A socket file left behind is replaced by the next bind (cleanupExistingSocketFile).
        try? FileManager.default.removeItem(atPath: configuration.socketPath)
    }

    /// Changes the device's network. Offline, the push service cannot reach the device and stores what
    /// it accepts; back online, it delivers what it kept.
    public func setNetwork(_ network: String) async throws {
        guard ["wifi", "cellular", "offline"].contains(network) else {
            throw DeviceError.unknownNetwork(network)
        }
        let wasReachable = self.network != "offline"
        self.network = network
        publish("device.network", ["network": network])
        transferDaemon.gate.set(network)
        let reachable = network != "offline"
        if reachable != wasReachable { await pushRegistry.setReachable(reachable) }
    }

    public func install(_ app: InstalledApp) throws {
        let container = try AppContainer(root: configuration.dataDirectory, bundleId: app.bundleId)
        apps[app.bundleId] = AppRecord(app: app, container: container)
        sessions.forget(app.bundleId)
        pushes.forget(app.bundleId)
    }

    public func state(of bundleId: String) -> AppState? { apps[bundleId]?.state }

    public func containerPaths(of bundleId: String) -> ContainerPaths? { apps[bundleId]?.container.paths }

    /// Starts the policy timer for `purpose`, replacing the one running; ``timerFired(_:generation:)``
    /// carries out what is due when it fires.
    func startTimer(_ purpose: PolicyTimers.Purpose, after delay: Duration) {
        timers.start(purpose, after: delay, on: clock) { purpose, generation in
            await self.timerFired(purpose, generation: generation)
        }
    }

    /// What each policy timer does when it fires, if it is still the current one for its purpose.
    private func timerFired(_ purpose: PolicyTimers.Purpose, generation: Int) async {
        guard !shuttingDown, timers.take(purpose, generation: generation) else { return }
        switch purpose {
        case .suspension(let bundleId):
            suspendIfIdle(bundleId)
        case .heldPushRelease(let bundleId):
            await releaseHeldPush(bundleId, on: .budgetAllowsWake)
        case .completionWatchdog(let bundleId, let completionId):
            completionBudgetExpired(bundleId, completionId: completionId)
        case .sessionHandlerWatchdog(let bundleId, let session):
            sessionHandlerExpired(bundleId, session: session)
        case .backgroundTime(let bundleId, let identifier):
            backgroundTimeExpired(bundleId, identifier)
        case .backgroundTaskGrace(let bundleId, let identifier):
            backgroundTaskGraceEnded(bundleId, identifier)
        case .notificationTrigger(let bundleId, let identifier):
            await notificationTriggerFired(bundleId, identifier: identifier)
        }
    }

    func publish(_ kind: EventKind, _ attributes: EventAttributes) {
        let source = kind.rawValue.hasPrefix("app.") ? "app" : "device"
        timeline.publish(kind, source: source, attributes)
    }

    /// Whether SpringBoard's state machine allows `event` for the app now; a refusal, worded for the user.
    func check(_ bundleId: String, _ event: LifecycleEvent) throws {
        let record = try record(bundleId)
        if case .failure(let error) = AppLifecycle.next(record.state, on: event) {
            throw DeviceError.notAllowed(bundleId: bundleId, error)
        }
    }

    /// Moves the app through SpringBoard's state machine (``AppLifecycle``), publishing the new state.
    @discardableResult
    func transition(_ bundleId: String, _ event: LifecycleEvent) throws -> AppState {
        try check(bundleId, event)
        let state = try AppLifecycle.next(try record(bundleId).state, on: event).get()
        setState(bundleId, state)
        return state
    }

    /// Moves the app as SpringBoard does where the device has already decided the move is due (a
    /// suspension, a wake, an exit). Should the state machine refuse it anyway, the state stays, the
    /// refusal is published (`device.app.lifecycleRefused`) and nil returned: never discarded.
    @discardableResult
    func move(_ bundleId: String, _ event: LifecycleEvent) -> AppState? {
        guard let current = apps[bundleId]?.state else { return nil }
        switch AppLifecycle.next(current, on: event) {
        case .success(let state):
            setState(bundleId, state)
            return state
        case .failure(let refusal):
            publish(
                .lifecycleRefused,
                ["bundleId": bundleId, "state": current.name, "event": "\(event)", "why": refusal.why])
            return nil
        }
    }

    private func setState(_ bundleId: String, _ state: AppState) {
        guard apps[bundleId]?.state != state else { return }
        apps[bundleId]?.state = state
        publish(.appStateChanged, ["bundleId": bundleId, "state": state.name, "detail": state.description])
    }

    func record(_ bundleId: String) throws -> AppRecord {
        guard let record = apps[bundleId] else { throw DeviceError.notInstalled(bundleId) }
        return record
    }
}
