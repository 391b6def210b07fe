import DeviceProtocol
import Foundation
import HarnessTimeline

/// Background sessions: the app asks, the ``TransferDaemon`` downloads, and the device hands each
/// event to the app, or holds it and wakes the app as iOS would (``BackgroundSessionRule``): resumed
/// or relaunched in the background, `handleEventsForBackgroundURLSession`, the session's events once
/// the app has recreated it, `urlSessionDidFinishEvents`, and a watchdog on the completion handler.
extension DeviceSimulator {
    func createSession(_ bundleId: String, _ params: SessionCreateParams) async throws {
        try await transferDaemon.createSession(bundleId: bundleId, params)
        sessions.created(params.identifier, background: params.background, by: bundleId)
        deliverHeldEvents(bundleId, session: params.identifier)
    }

    func resumeDownload(_ bundleId: String, _ params: DownloadTaskParams) async throws {
        let file = try record(bundleId).container.temporaryDownloadURL()
        let session = params.session
        let createdInBackground = !(apps[bundleId]?.state.isForeground ?? false)
        // A task created in the background waits out the resume rate limiter (docs/ios-rules.md U2, U9).
        let now = policyNow
        let start = createdInBackground ? sessions.startOfTaskCreated(by: bundleId, at: now) : nil
        let delay = start.map { ($0.start - now, $0.delay) }
        try await transferDaemon.resume(
            bundleId: bundleId, params: params, temporaryFile: file, createdInBackground: createdInBackground,
            rateLimited: delay
        ) { event in
            await self.forward(event, session: session, to: bundleId)
        }
        sessions.taskStarted(params.taskIdentifier, in: session, of: bundleId)
    }

    /// Hands a transfer event to the app, or holds it and wakes the app. Returns whether the app
    /// received it (what decides the fate of a finished file); for a held `didFinishDownloadingTo`,
    /// only once the app has answered it, so the file waits for the app.
    private func forward(_ event: TransferDaemon.Event, session: String, to bundleId: String) async -> Bool {
        // A device shutting down wakes no app for an event: nothing would ever answer it.
        guard !shuttingDown, let record = apps[bundleId] else { return false }
        var isProgress = false
        switch event {
        case .progress, .resumed: isProgress = true
        case .finished, .completed: break
        }
        if case .completed(let params) = event {
            sessions.taskCompleted(params.taskIdentifier, in: session, of: bundleId)
        }
        // An app the device has killed is gone, as on iOS, even before its exit is reported.
        let dying = record.killCause
        let route = sessions.route(
            isProgress: isProgress, session: session, of: bundleId,
            state: dying.map { .notRunning($0) } ?? record.state,
            connected: record.connection != nil && dying == nil)
        switch route {
        case .drop:
            return false
        case .deliver:
            return await deliver(event, session: session, to: bundleId, held: false)
        case .hold, .holdAndResume, .holdAndRelaunch, .holdUntilUserLaunch:
            switch event {
            case .progress, .resumed:
                return false
            case .completed(let params):
                sessions.hold(.completed(params), session: session, of: bundleId)
                wake(bundleId, for: session, route: route)
                return true
            case .finished(let params):
                return await withCheckedContinuation { answered in
                    sessions.hold(.finished(params, answered: answered), session: session, of: bundleId)
                    wake(bundleId, for: session, route: route)
                }
            }
        }
    }

    /// Sends one event to the connected app; a finished file waits for the app's answer.
    private func deliver(_ event: TransferDaemon.Event, session: String, to bundleId: String, held: Bool) async -> Bool
    {
        guard let connection = apps[bundleId]?.connection else { return false }
        switch event {
        case .progress(let params):
            connection.notify(DeviceMethod.didWriteData, params)
            return true
        case .resumed(let params):
            connection.notify(DeviceMethod.didResumeAtOffset, params)
            return true
        case .finished(let params):
            publishSessionEvent(
                bundleId, session: session, task: params.taskIdentifier, "didFinishDownloadingTo", held: held)
            do {
                _ = try await connection.request(DeviceMethod.didFinishDownloadingTo, params)
                return true
            } catch {
                return false
            }
        case .completed(let params):
            var attributes: EventAttributes = [:]
            attributes["code"] = params.error.map { "\($0.code)" }
            attributes["cancelledReason"] = params.error?.backgroundTaskCancelledReason.map { "\($0)" }
            publishSessionEvent(
                bundleId, session: session, task: params.taskIdentifier, "didCompleteWithError", held: held, attributes)
            connection.notify(DeviceMethod.didCompleteWithError, params)
            finishEventsIfDone(bundleId, session: session)
            return true
        }
    }

    private func publishSessionEvent(
        _ bundleId: String, session: String, task: Int, _ method: String, held: Bool, _ more: EventAttributes = [:]
    ) {
        publish(
            .sessionEvent,
            (["bundleId": bundleId, "session": session, "task": "\(task)", "event": method, "held": "\(held)"]
                as EventAttributes)
                .merging(more))
    }

    /// Wakes the app for a session whose events it is holding, as the route says.
    private func wake(_ bundleId: String, for session: String, route: BackgroundSessionRule.Route) {
        guard let record = apps[bundleId] else { return }
        switch route {
        case .holdAndResume:
            guard record.state == .suspended else { return }
            record.process?.resume()
            timers.cancel(.suspension(bundleId: bundleId))
            move(bundleId, .wake)
            announce(bundleId, session: session, wake: "resumed")
        case .holdAndRelaunch:
            guard sessions.handler(for: session, of: bundleId) == nil else { return }
            sessions.announceAfterLaunch(session, of: bundleId)
            if record.killCause != nil, record.process != nil {
                // Killed, its exit not reported yet: relaunched once it is.
                apps[bundleId]?.relaunchForSessionsAfterExit = true
                return
            }
            guard !record.state.isRunning else { return }
            relaunchForSessions(bundleId)
        case .hold:
            // The app runs or is launching: it gets the events when it creates the session.
            deliverHeldEvents(bundleId, session: session)
        case .deliver, .drop, .holdUntilUserLaunch:
            break
        }
    }

    /// Launches the app in the background for its sessions' events.
    func relaunchForSessions(_ bundleId: String) {
        work.start { await self.relaunchSayingWhyNot(bundleId) }
    }

    private func relaunchSayingWhyNot(_ bundleId: String) async {
        do {
            try await launch(bundleId, reason: .backgroundURLSession)
        } catch {
            publish(
                "device.app.launchFailed",
                ["bundleId": bundleId, "reason": LaunchReason.backgroundURLSession.rawValue, "error": "\(error)"])
        }
    }

    /// `handleEventsForBackgroundURLSession`, with a watchdog on its completion handler; then the held
    /// events, if the process has the session already.
    func announce(_ bundleId: String, session: String, wake: String) {
        guard let connection = apps[bundleId]?.connection, sessions.handler(for: session, of: bundleId) == nil else {
            return
        }
        let completionId = nextCompletionId
        nextCompletionId += 1
        sessions.owe(completionId, for: session, of: bundleId)
        startTimer(
            .sessionHandlerWatchdog(bundleId: bundleId, session: session), after: configuration.backgroundPushBudget)
        sessions.wokeForSessions(bundleId, at: policyNow)
        publish(
            .sessionHandleEvents,
            ["bundleId": bundleId, "session": session, "completionId": "\(completionId)", "wake": wake])
        connection.notify(
            DeviceMethod.handleEventsForBackgroundURLSession,
            HandleEventsParams(identifier: session, completionId: completionId))
        deliverHeldEvents(bundleId, session: session)
    }

    /// Announces the sessions a background relaunch was for, once the app has connected.
    func announceSessionsAfterLaunch(_ bundleId: String) {
        for session in sessions.takeSessionsToAnnounce(of: bundleId) {
            announce(bundleId, session: session, wake: "launched")
        }
    }

    /// Hands a session's held events over, in order, if the app runs and has created the session.
    func deliverHeldEvents(_ bundleId: String, session: String) {
        guard sessions.beginFlush(session, of: bundleId) else { return }
        work.start { await self.flushHeldEvents(bundleId, session: session) }
    }

    /// The held events, one after another while the app is awake; then the flush ends.
    private func flushHeldEvents(_ bundleId: String, session: String) async {
        while apps[bundleId]?.state.isAwake == true, let next = sessions.nextHeld(session, of: bundleId) {
            switch next {
            case .completed(let params):
                _ = await deliver(.completed(params), session: session, to: bundleId, held: true)
            case .finished(let params, let answered):
                answered.resume(returning: await deliver(.finished(params), session: session, to: bundleId, held: true))
            }
        }
        sessions.endFlush(session, of: bundleId)
        finishEventsIfDone(bundleId, session: session)
    }

    /// `urlSessionDidFinishEvents` once an announced session has nothing left to deliver.
    private func finishEventsIfDone(_ bundleId: String, session: String) {
        guard sessions.isDone(session, of: bundleId), let connection = apps[bundleId]?.connection else { return }
        publish(.sessionDidFinishEvents, ["bundleId": bundleId, "session": session])
        connection.notify(DeviceMethod.urlSessionDidFinishEvents, SessionEventsFinishedParams(session: session))
    }

    func backgroundEventsCompleted(_ bundleId: String, _ params: BackgroundEventsCompletionParams) throws {
        guard let session = sessions.paid(params.completionId, by: bundleId) else {
            throw RPCError.refused("completion handler \(params.completionId) was already called or has expired")
        }
        timers.cancel(.sessionHandlerWatchdog(bundleId: bundleId, session: session))
        publish(.appSessionEventsCompleted, ["bundleId": bundleId, "session": session])
        suspendIfIdle(bundleId)
    }

    func sessionHandlerExpired(_ bundleId: String, session: String) {
        guard sessions.expire(session, of: bundleId) else { return }
        publish(
            .sessionHandlerNotCalled,
            [
                "bundleId": bundleId, "session": session, "budget": "\(configuration.backgroundPushBudget)",
                "reason":
                    "the app did not call the completion handler of application(_:handleEventsForBackgroundURLSession:completionHandler:) within \(configuration.backgroundPushBudget)",
            ])
        suspendIfIdle(bundleId)
    }

    /// The process ended: its sessions are gone with it (the events stay held for the next one).
    func forgetSessionsOfExitedProcess(_ bundleId: String) {
        for session in sessions.processExited(bundleId) {
            timers.cancel(.sessionHandlerWatchdog(bundleId: bundleId, session: session))
        }
    }

    /// Run's end: files held for an app that never came back are let go.
    func releaseHeldEvents() {
        for case .finished(_, let answered) in sessions.takeAllHeld() { answered.resume(returning: false) }
    }
}
