import DeviceProtocol
import Foundation
import HarnessTimeline
import PushChannel

/// apsd: what happens to a push that reached the device, and the 30 s budget of a background wake.
extension DeviceSimulator {
    func receive(_ push: IncomingPush, for bundleId: String) async {
        guard let record = apps[bundleId] else { return }
        let decision = SilentPushWakeRule.decide(
            state: record.state, isContentAvailable: push.isContentAvailable,
            backgroundModes: record.app.backgroundModes)
        publish(
            .pushReceived,
            [
                "bundleId": bundleId, "apnsId": push.apnsId, "appState": record.state.name,
                "decision": "\(decision)", "payload": JSONValue.object(push.payload).jsonString(),
            ])
        let aps = push.payload["aps"]
        if let warning = PushShapeRule.warning(
            pushType: push.pushType, priority: push.priority, contentAvailable: push.isContentAvailable,
            userVisible: push.alert != nil || aps?["badge"] != nil || aps?["sound"] != nil)
        {
            publish(.pushWarning, ["bundleId": bundleId, "apnsId": push.apnsId, "warning": warning])
        }
        let completionId = nextCompletionId
        nextCompletionId += 1
        let notification = RemoteNotificationParams(completionId: completionId, userInfo: push.payload)
        if decision != .deliverInForeground, let alert = push.alert {
            showNotification(bundleId, identifier: push.collapseId ?? push.apnsId, alert: alert, payload: push.payload)
        }
        await wake(bundleId, with: push, notification, decision: decision)
    }

    /// Carries out the rule's decision, unless the settings or the budget hold the wake back.
    private func wake(
        _ bundleId: String, with push: IncomingPush, _ notification: RemoteNotificationParams,
        decision: SilentPushWakeRule.Decision
    ) async {
        guard let record = apps[bundleId] else { return }
        let completionId = notification.completionId
        if decision == .launchInBackground, let bootedAt, policyNow - bootedAt < configuration.bootLaunchDelay {
            // dasd defers launches right after boot (docs/ios-rules.md P12).
            let reason =
                "the device booted \(policyNow - bootedAt) ago; launches for pushes wait \(configuration.bootLaunchDelay) after boot (ThunderingHerdPolicy)"
            hold(push, notification, for: bundleId, reason: reason, until: bootedAt + configuration.bootLaunchDelay)
            return
        }
        if [.deliverInBackground, .resumeInBackground, .launchInBackground].contains(decision) {
            switch pushes.spendWake(bundleId, at: policyNow) {
            case .allowed:
                break
            case .held(let reason, let until):
                hold(push, notification, for: bundleId, reason: reason, until: until)
                return
            }
        }
        switch decision {
        case .deliverInForeground:
            // No clock while active; it starts if the user leaves the app before the handler is called.
            pushes.owe(completionId, OwedCompletion(handler: Self.remoteNotificationHandler), by: bundleId)
            deliver(notification, to: bundleId, wake: "foreground")
        case .deliverInBackground:
            startBudget(bundleId, completionId: completionId)
            deliver(notification, to: bundleId, wake: "background")
        case .resumeInBackground:
            startBudget(bundleId, completionId: completionId)
            record.process?.resume()
            move(bundleId, .wake)
            deliver(notification, to: bundleId, wake: "resumed")
            flushHeld(bundleId)
        case .deliverAfterLaunch:
            startBudget(bundleId, completionId: completionId)
            pushes.arrivedDuringLaunch(notification, for: bundleId)
        case .launchInBackground:
            startBudget(bundleId, completionId: completionId)
            pushes.setLaunchPush(notification, for: bundleId)
            do {
                try await launch(bundleId, reason: .remoteNotification)
            } catch {
                pushes.setLaunchPush(nil, for: bundleId)
                pushes.settle(completionId, by: bundleId)
                timers.cancel(.completionWatchdog(bundleId: bundleId, completionId: completionId))
                publish(
                    "device.app.launchFailed",
                    ["bundleId": bundleId, "reason": "remote-notification", "error": "\(error)"])
            }
        case .notLaunchedAfterForceQuit, .ignoredNoBackgroundMode, .notSilent:
            break
        }
    }

    /// Holds a background push back (docs/ios-rules.md P10, P11); only the newest is kept (P7).
    private func hold(
        _ push: IncomingPush, _ notification: RemoteNotificationParams, for bundleId: String, reason: String,
        until: Duration?
    ) {
        if case .discard(let why) = HeldPushRule.action(on: .newerPushHeld) { discardHeldPush(bundleId, because: why) }
        _ = pushes.hold(push, notification, for: bundleId)
        var attributes: EventAttributes = [
            "bundleId": bundleId, "apnsId": push.apnsId, "completionId": "\(notification.completionId)",
            "reason": reason,
        ]
        attributes["until"] = until.map { "\($0 - policyNow)" }
        publish(.pushHeld, attributes)
        guard let until else { return }
        startTimer(.heldPushRelease(bundleId: bundleId), after: until - policyNow)
    }

    func discardHeldPush(_ bundleId: String, because reason: String) {
        guard let held = pushes.takeHeld(bundleId) else { return }
        timers.cancel(.heldPushRelease(bundleId: bundleId))
        publish(
            .pushDiscarded,
            [
                "bundleId": bundleId, "apnsId": held.push.apnsId, "completionId": "\(held.notification.completionId)",
                "reason": reason,
            ])
    }

    /// Lets the held push through, decided again for the app's state now: woken in the background if
    /// the budget allows, or delivered in the foreground when the user opened the app (P8).
    func releaseHeldPush(_ bundleId: String, on event: HeldPushRule.Event) async {
        guard let record = apps[bundleId], let held = pushes.takeHeld(bundleId) else { return }
        let why = event == .userOpenedApp ? "the user opened the app" : "the budget allows a wake again"
        timers.cancel(.heldPushRelease(bundleId: bundleId))
        publish(
            .pushReleased,
            [
                "bundleId": bundleId, "apnsId": held.push.apnsId, "completionId": "\(held.notification.completionId)",
                "why": why,
            ])
        let decision: SilentPushWakeRule.Decision
        switch HeldPushRule.action(on: event) {
        case .deliverInForeground:
            decision = .deliverInForeground
        case .decideAgain, .discard:
            decision = SilentPushWakeRule.decide(
                state: record.state, isContentAvailable: held.push.isContentAvailable,
                backgroundModes: record.app.backgroundModes)
        }
        await wake(bundleId, with: held.push, held.notification, decision: decision)
    }

    private func deliver(_ notification: RemoteNotificationParams, to bundleId: String, wake: String) {
        guard let connection = apps[bundleId]?.connection else { return }
        publish(.pushDelivered, ["bundleId": bundleId, "completionId": "\(notification.completionId)", "wake": wake])
        connection.notify(DeviceMethod.didReceiveRemoteNotification, notification)
    }

    /// Starts the budget of completion handlers owed from the foreground: leaving the app starts their clock.
    func startBudgetsOwedFromForeground(_ bundleId: String) {
        for (completionId, handler) in pushes.owedFromForeground(bundleId) {
            startBudget(bundleId, completionId: completionId, handler: handler)
        }
    }

    static let remoteNotificationHandler = "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)"

    /// Starts the clock of a background wake: the app must call the completion handler (of `handler`)
    /// within the budget.
    func startBudget(_ bundleId: String, completionId: Int, handler: String = remoteNotificationHandler) {
        timers.cancel(.suspension(bundleId: bundleId))
        pushes.owe(completionId, OwedCompletion(handler: handler, clockStartedAt: policyNow), by: bundleId)
        startTimer(
            .completionWatchdog(bundleId: bundleId, completionId: completionId),
            after: configuration.backgroundPushBudget)
    }

    /// The watchdog of a completion handler fired: ``CompletionHandlerRule`` decides on the time that
    /// has really passed since its clock started; a kill when the budget is spent and the handler still
    /// owed, else the watchdog waits out the rest.
    func completionBudgetExpired(_ bundleId: String, completionId: Int) {
        guard let owed = pushes.owed(completionId, by: bundleId) else { return }
        let budget = configuration.backgroundPushBudget
        let elapsed = owed.clockStartedAt.map { policyNow - $0 }
        switch CompletionHandlerRule.outcome(called: false, elapsed: elapsed, budget: budget) {
        case .watchdogKill:
            break
        case .keepRunning:
            if let elapsed {
                startTimer(.completionWatchdog(bundleId: bundleId, completionId: completionId), after: budget - elapsed)
            }
            return
        case .suspendWhenIdle:
            return
        }
        pushes.settle(completionId, by: bundleId)
        let handler = owed.handler
        publish(
            .watchdogKilled,
            [
                "bundleId": bundleId, "completionId": "\(completionId)",
                "budget": "\(configuration.backgroundPushBudget)",
                "reason":
                    "the app did not call the completion handler of \(handler) within \(configuration.backgroundPushBudget)",
            ])
        kill(bundleId, cause: .watchdog)
    }

    func fetchCompleted(_ bundleId: String, _ params: FetchCompletionParams) throws {
        guard pushes.settle(params.completionId, by: bundleId) else {
            throw RPCError.refused("completion handler \(params.completionId) was already called or has expired")
        }
        timers.cancel(.completionWatchdog(bundleId: bundleId, completionId: params.completionId))
        publish(
            .appFetchCompleted,
            ["bundleId": bundleId, "completionId": "\(params.completionId)", "result": params.result])
        // iOS suspends a background app as soon as it has called the handler (P13).
        suspendIfIdle(bundleId)
    }
}
