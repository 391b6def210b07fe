import DeviceProtocol
import Foundation
import HarnessTimeline

/// Background time: `beginBackgroundTask` keeps an app running in the background, instead of being
/// suspended, for `backgroundTimeAllowance` (about 30 s); when it runs out the app's expiration
/// handler is called, and an app that still has not ended the task a moment later is killed.
extension DeviceSimulator {
    func beginBackgroundTask(_ bundleId: String, _ params: BackgroundTaskParams) throws {
        let name = params.name ?? ""
        try backgroundTasks.begin(bundleId, identifier: params.identifier, name: name)
        timers.cancel(.suspension(bundleId: bundleId))
        publish(.backgroundTaskBegan, ["bundleId": bundleId, "identifier": "\(params.identifier)", "name": name])
        if !(apps[bundleId]?.state.isForeground ?? true) { startBackgroundTime(bundleId, params.identifier) }
    }

    func endBackgroundTask(_ bundleId: String, _ params: BackgroundTaskParams) throws {
        let name = try backgroundTasks.end(bundleId, identifier: params.identifier)
        timers.cancel(.backgroundTime(bundleId: bundleId, identifier: params.identifier))
        timers.cancel(.backgroundTaskGrace(bundleId: bundleId, identifier: params.identifier))
        publish(.backgroundTaskEnded, ["bundleId": bundleId, "identifier": "\(params.identifier)", "name": name])
        suspendIfIdle(bundleId)
    }

    /// The app left the foreground: the allowance of its open background tasks starts.
    func startBackgroundTimeOfOpenTasks(_ bundleId: String) {
        for identifier in backgroundTasks.identifiers(of: bundleId)
        where !timers.isRunning(.backgroundTime(bundleId: bundleId, identifier: identifier))
            && !timers.isRunning(.backgroundTaskGrace(bundleId: bundleId, identifier: identifier))
        {
            startBackgroundTime(bundleId, identifier)
        }
    }

    private func startBackgroundTime(_ bundleId: String, _ identifier: Int) {
        startTimer(
            .backgroundTime(bundleId: bundleId, identifier: identifier), after: configuration.backgroundTimeAllowance)
    }

    /// The allowance ran out: the app's expiration handler is called, and it has a moment to end the task.
    func backgroundTimeExpired(_ bundleId: String, _ identifier: Int) {
        guard let name = backgroundTasks.name(bundleId, identifier: identifier) else { return }
        publish(
            .backgroundTaskExpired,
            [
                "bundleId": bundleId, "identifier": "\(identifier)", "name": name,
                "allowance": "\(configuration.backgroundTimeAllowance)",
            ])
        apps[bundleId]?.connection?.notify(
            DeviceMethod.backgroundTaskExpired, BackgroundTaskParams(identifier: identifier))
        startTimer(.backgroundTaskGrace(bundleId: bundleId, identifier: identifier), after: .seconds(1))
    }

    /// The moment after the expiration handler has passed: a task still open gets the app killed.
    func backgroundTaskGraceEnded(_ bundleId: String, _ identifier: Int) {
        guard let name = backgroundTasks.close(bundleId, identifier: identifier) else { return }
        publish(
            .watchdogKilled,
            [
                "bundleId": bundleId, "identifier": "\(identifier)",
                "reason":
                    "the app did not call endBackgroundTask(_:) for background task \(identifier) ('\(name)') before its \(configuration.backgroundTimeAllowance) ran out, not even in its expiration handler",
            ])
        kill(bundleId, cause: .watchdog)
    }
}
