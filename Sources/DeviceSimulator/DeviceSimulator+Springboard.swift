import DeviceProtocol
import Foundation
import HarnessTimeline
import Processes

/// SpringBoard: launching, backgrounding, suspending and killing app processes.
extension DeviceSimulator {
    /// Launches the app as the user would (tap on the icon) and waits until it has connected.
    public func launch(_ bundleId: String) async throws {
        try requireUnlocked("launch \(bundleId)")
        try await launch(bundleId, reason: .user)
    }

    func requireUnlocked(_ action: String) throws {
        guard !locked else { throw DeviceError.locked(action: action) }
    }

    /// The side button: the app on screen resigns active, enters the background and is suspended a
    /// moment later, as after Home. Until `unlock`, no app can come to the foreground.
    public func lock() {
        guard !locked else { return }
        locked = true
        publish("device.locked", [:])
        for (bundleId, record) in apps where record.state.isForeground {
            onScreenBeforeLock = bundleId
            move(bundleId, .lock)
            record.connection?.notify(DeviceMethod.applicationWillResignActive, Empty())
            leaveForeground(bundleId)
        }
    }

    /// Unlocks the device; the app that was on screen comes back to the foreground.
    public func unlock() async throws {
        guard locked else { return }
        locked = false
        publish("device.unlocked", [:])
        if let bundleId = onScreenBeforeLock,
            apps[bundleId]?.state == .background || apps[bundleId]?.state == .suspended
        {
            try await bringToForeground(bundleId)
        }
        onScreenBeforeLock = nil
    }

    /// Restarts the device: every app's process ends, a force-quit app becomes eligible again for
    /// background launches by pushes (its cancelled transfers stay cancelled), the device comes back
    /// locked, and for `bootLaunchDelay` launches for pushes are deferred (docs/ios-rules.md P6, P12).
    public func reboot() async {
        publish("device.rebooting", [:])
        for bundleId in apps.keys.sorted() where apps[bundleId]?.state.isRunning == true {
            // An app whose process ended while an earlier one was being killed has nothing left to end.
            try? await terminate(bundleId, cause: .rebooted)
        }
        for bundleId in apps.keys { move(bundleId, .reboot) }
        locked = true
        onScreenBeforeLock = nil
        bootedAt = policyNow
        publish("device.rebooted", ["locked": "true", "bootLaunchDelay": "\(configuration.bootLaunchDelay)"])
    }

    func launch(_ bundleId: String, reason: LaunchReason) async throws {
        // What shutdown kills is what ran when it began: nothing starts after that.
        guard !shuttingDown else { throw DeviceError.shuttingDown(bundleId: bundleId) }
        try check(bundleId, .launch(reason))
        var record = try record(bundleId)
        var environment = ProcessInfo.processInfo.environment
        environment.merge(configuration.environment) { _, new in new }
        environment.merge(record.app.environment) { _, new in new }
        environment["HARNESS_DEVICE_SOCKET"] = configuration.socketPath
        environment["HARNESS_BUNDLE_ID"] = bundleId
        environment["HOME"] = record.container.paths.home
        environment["TMPDIR"] = record.container.paths.tmp
        let timeline = timeline
        let work = work
        let process: AppProcess
        do {
            process = try AppProcess(
                command: record.app.command, workingDirectory: record.app.workingDirectory, environment: environment,
                onLine: { line in timeline.publish(.appOutput, source: "app", ["bundleId": bundleId, "line": line]) },
                onExit: { termination in work.start { await self.processExited(bundleId, termination: termination) } }
            )
        } catch {
            // A launch step fails with the device's error, in the process's words.
            throw DeviceError.cannotStart(bundleId: bundleId, error)
        }
        let pid = process.pid
        record.process = process
        record.killCause = nil
        apps[bundleId] = record
        refusedHandshakes[bundleId] = nil
        try transition(bundleId, .launch(reason))
        publish(.appLaunched, ["bundleId": bundleId, "reason": reason.rawValue, "pid": "\(pid)"])
        try await waitForConnection(bundleId, pid: pid)
    }

    private func waitForConnection(_ bundleId: String, pid: Int32) async throws {
        let timeout = configuration.launchTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The launch's deadline, cancelled once the launch has ended either way. A launch whose
            // caller is cancelled waits for its app without one: the device's shutdown, which comes
            // with every cancelled run, ends the app and so the launch.
            group.addTask {
                await pause(for: timeout)
                if !Task.isCancelled { await self.launchTimedOut(bundleId, pid: pid) }
            }
            defer { group.cancelAll() }
            try await withCheckedThrowingContinuation { continuation in
                if apps[bundleId]?.process?.pid == pid, case .launching = apps[bundleId]?.state {
                    apps[bundleId]?.launchWaiter = continuation
                } else {
                    continuation.resume(throwing: launchFailure(bundleId, "exited during launch"))
                }
            }
        }
    }

    private func launchTimedOut(_ bundleId: String, pid: Int32) {
        guard apps[bundleId]?.process?.pid == pid, let waiter = apps[bundleId]?.launchWaiter else { return }
        apps[bundleId]?.launchWaiter = nil
        let connectedSilently = hasConnectedWithoutHello(pid)
        let silent =
            connectedSilently
            ? "connected to the device socket but sent no hello within \(configuration.launchTimeout) (the first message must be a 'hello' request: docs/device-protocol.md)"
            : "did not connect to the device socket within \(configuration.launchTimeout): an app connects to the Unix socket "
                + "named by the variable HARNESS_DEVICE_SOCKET, then sends a 'hello' request (docs/writing-an-app.md; "
                + "an app in Swift does it with DeviceClient's ApplicationMain)"
        let refusal = refusedHandshakes.removeValue(forKey: bundleId)
        if refusal == nil, connectedSilently {
            publish(
                .appHandshakeFailed,
                ["bundleId": bundleId, "pid": "\(pid)", "reason": "no hello within \(configuration.launchTimeout)"])
        }
        let what = refusal.map(Self.refusal) ?? silent
        waiter.resume(throwing: launchFailure(bundleId, what))
        kill(bundleId, cause: .exited)
    }

    func launchFailure(_ bundleId: String, _ what: String) -> DeviceError {
        .launchFailed(bundleId: bundleId, what: what, output: apps[bundleId]?.process?.lastOutputLines ?? [])
    }

    /// The Home button: the app moves to the background and is suspended a moment later, unless it
    /// still owes a completion handler.
    public func pressHome(_ bundleId: String) async throws {
        try check(bundleId, .home)
        leaveForeground(bundleId)
    }

    /// To the background, with the clock of owed handlers started and suspension scheduled.
    private func leaveForeground(_ bundleId: String) {
        move(bundleId, .home)
        apps[bundleId]?.connection?.notify(DeviceMethod.applicationDidEnterBackground, Empty())
        startBudgetsOwedFromForeground(bundleId)
        startBackgroundTimeOfOpenTasks(bundleId)
        scheduleSuspension(bundleId, after: configuration.suspendAfterBackground)
    }

    /// Brings the app back to the foreground (from the app switcher).
    public func bringToForeground(_ bundleId: String) async throws {
        try requireUnlocked("bring \(bundleId) to the foreground")
        try check(bundleId, .foreground)
        let record = try record(bundleId)
        if record.state == .suspended { record.process?.resume() }
        timers.cancel(.suspension(bundleId: bundleId))
        sessions.resetRateLimiter(bundleId)
        // On screen, background time does not run out.
        timers.cancelAll(of: bundleId) {
            if case .backgroundTime = $0 { true } else { false }
        }
        try transition(bundleId, .foreground)
        record.connection?.notify(DeviceMethod.applicationWillEnterForeground, Empty())
        record.connection?.notify(DeviceMethod.applicationDidBecomeActive, Empty())
        flushHeld(bundleId)
    }

    func scheduleSuspension(_ bundleId: String, after delay: Duration) {
        startTimer(.suspension(bundleId: bundleId), after: delay)
    }

    /// `SIGSTOP` once the app has nothing it is allowed to finish in the background.
    func suspendIfIdle(_ bundleId: String) {
        guard let record = apps[bundleId], record.state == .background, let process = record.process,
            !pushes.owesCompletion(bundleId), !sessions.owesHandler(bundleId), !backgroundTasks.hasOpen(bundleId)
        else { return }
        process.suspend()
        move(bundleId, .suspend)
    }

    /// The user deletes the app: its process ends, its container goes, and APNs answers its token with
    /// `410 Unregistered` from now on (docs/ios-rules.md 1.5). It can no longer be launched.
    public func uninstall(_ bundleId: String) async throws {
        let record = try record(bundleId)
        if record.state.isRunning, record.process != nil { try await terminate(bundleId, cause: .exited) }
        if let token = apps[bundleId]?.deviceToken { await pushRegistry.unregisterDevice(token: token) }
        timers.cancelAll(of: bundleId)
        notifications.forget(bundleId)
        sessions.forget(bundleId)
        pushes.forget(bundleId)
        // A container that cannot be removed stays as files nobody reads: the app is gone either way.
        try? FileManager.default.removeItem(atPath: record.container.paths.home)
        apps[bundleId] = nil
        publish("device.app.uninstalled", ["bundleId": bundleId, "deviceToken": record.deviceToken ?? ""])
    }

    /// The app crashes (`SIGKILL`): it stays eligible to be launched in the background for pushes and
    /// background sessions.
    public func crash(_ bundleId: String) async throws {
        try await terminate(bundleId, cause: .crashed)
    }

    /// The system terminates the app (memory pressure, "jetsam"): eligible for background launches, as
    /// after a crash.
    public func terminateBySystem(_ bundleId: String) async throws {
        try await terminate(bundleId, cause: .systemTerminated)
    }

    /// The user swipes the app away in the app switcher: no background launch for pushes, and its
    /// background transfers are cancelled (-999, reason 0), reported when the user launches it again.
    public func forceQuit(_ bundleId: String) async throws {
        try await terminate(bundleId, cause: .forceQuit)
    }

    func terminate(_ bundleId: String, cause: NotRunningCause) async throws {
        try check(bundleId, .terminate(cause))
        guard try record(bundleId).process != nil else { throw DeviceError.noProcess(bundleId: bundleId) }
        await withCheckedContinuation { exited in
            apps[bundleId]?.exitWaiters.append(exited)
            kill(bundleId, cause: cause)
        }
    }

    /// Kills the process with `SIGKILL`, remembering why, since iOS treats the causes differently.
    func kill(_ bundleId: String, cause: NotRunningCause) {
        guard let process = apps[bundleId]?.process else { return }
        apps[bundleId]?.killCause = cause
        process.kill()
    }

    func processExited(_ bundleId: String, termination: AppProcess.Termination) async {
        guard let process = apps[bundleId]?.process else { return }
        // The last lines may still be in the pipe when the exit is reported.
        await process.waitForOutputEnd(atMost: .seconds(1))
        guard var record = apps[bundleId], record.process === process else { return }
        let cause = record.killCause ?? (termination.signal == nil && termination.status == 0 ? .exited : .crashed)
        let refusal = refusedHandshakes.removeValue(forKey: bundleId)
        let failure = record.launchWaiter.map { _ in
            launchFailure(bundleId, refusal.map(Self.refusal) ?? "exited during launch (\(termination.description))")
        }
        let waiter = record.launchWaiter
        record.launchWaiter = nil
        // What the process owed dies with it; a held push and scheduled notifications outlive it.
        timers.cancelAll(of: bundleId) { purpose in
            switch purpose {
            case .suspension, .completionWatchdog, .sessionHandlerWatchdog, .backgroundTime, .backgroundTaskGrace:
                true
            case .heldPushRelease, .notificationTrigger:
                false
            }
        }
        backgroundTasks.forget(bundleId)
        // iOS discards a held push when the app dies; a push for the launch that failed goes with it.
        pushes.processExited(bundleId)
        record.connection?.close()
        record.connection = nil
        record.process = nil
        apps[bundleId] = record
        publish(.appExited, ["bundleId": bundleId, "cause": cause.rawValue, "termination": termination.description])
        move(bundleId, .terminate(cause))
        forgetSessionsOfExitedProcess(bundleId)
        if case .discard(let why) = HeldPushRule.action(on: .appTerminated(cause)) {
            discardHeldPush(bundleId, because: why)
        }
        await transferDaemon.cancelTasksOfExitedApp(bundleId: bundleId, forceQuit: cause == .forceQuit)
        if let waiter, let failure { waiter.resume(throwing: failure) }
        let exitWaiters = apps[bundleId]?.exitWaiters ?? []
        apps[bundleId]?.exitWaiters.removeAll()
        for exitWaiter in exitWaiters { exitWaiter.resume() }
        if apps[bundleId]?.relaunchForSessionsAfterExit == true {
            apps[bundleId]?.relaunchForSessionsAfterExit = false
            if !shuttingDown, apps[bundleId]?.state.isRunning == false { relaunchForSessions(bundleId) }
        }
    }
}
