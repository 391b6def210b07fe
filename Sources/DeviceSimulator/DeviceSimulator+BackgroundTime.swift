import DeviceProtocol
import Foundation
import HarnessTimeline

/// Background time: `beginBackgroundTask` keeps an app running in the background, instead of being
/// suspended, for `backgroundTimeAllowance` (about 30 s); when it runs out the app's expiration
/// handler is called, and an app that still has not ended the task a moment later is killed.
extension DeviceSimulator {
    func beginBackgroundTask(_ bundleId: String, _ params: BackgroundTaskParams) throws {
        guard apps[bundleId]?.backgroundTasks[params.identifier] == nil else {
            throw RPCError.refused("background task \(params.identifier) is already open")
        }
        let name = params.name ?? ""
        apps[bundleId]?.backgroundTasks[params.identifier] = (name, nil)
        apps[bundleId]?.suspendTask?.cancel()
        publish(.backgroundTaskBegan, ["bundleId": bundleId, "identifier": "\(params.identifier)", "name": name])
        if !(apps[bundleId]?.state.isForeground ?? true) { startBackgroundTime(bundleId, params.identifier) }
    }

    func endBackgroundTask(_ bundleId: String, _ params: BackgroundTaskParams) throws {
        guard let task = apps[bundleId]?.backgroundTasks.removeValue(forKey: params.identifier) else {
            throw RPCError.refused("background task \(params.identifier) is not open (ended already, or never begun)")
        }
        task.timer?.cancel()
        publish(.backgroundTaskEnded, ["bundleId": bundleId, "identifier": "\(params.identifier)", "name": task.name])
        suspendIfIdle(bundleId)
    }

    /// The app left the foreground: the allowance of its open background tasks starts.
    func startBackgroundTimeOfOpenTasks(_ bundleId: String) {
        for (identifier, task) in apps[bundleId]?.backgroundTasks ?? [:] where task.timer == nil {
            startBackgroundTime(bundleId, identifier)
        }
    }

    private func startBackgroundTime(_ bundleId: String, _ identifier: Int) {
        let allowance = configuration.backgroundTimeAllowance
        let clock = clock
        let timer = Task {
            try? await clock.sleep(for: allowance)
            guard !Task.isCancelled else { return }
            await self.backgroundTimeExpired(bundleId, identifier)
        }
        apps[bundleId]?.backgroundTasks[identifier]?.timer = timer
    }

    private func backgroundTimeExpired(_ bundleId: String, _ identifier: Int) async {
        guard let task = apps[bundleId]?.backgroundTasks[identifier] else { return }
        publish(
            .backgroundTaskExpired,
            [
                "bundleId": bundleId, "identifier": "\(identifier)", "name": task.name,
                "allowance": "\(configuration.backgroundTimeAllowance)",
            ])
        apps[bundleId]?.connection?.notify(
            DeviceMethod.backgroundTaskExpired, BackgroundTaskParams(identifier: identifier))
        // The expiration handler must end the task; a moment later the watchdog acts.
        try? await clock.sleep(for: .seconds(1))
        guard apps[bundleId]?.backgroundTasks[identifier] != nil else { return }
        apps[bundleId]?.backgroundTasks[identifier] = nil
        publish(
            .watchdogKilled,
            [
                "bundleId": bundleId, "identifier": "\(identifier)",
                "reason":
                    "the app did not call endBackgroundTask(_:) for background task \(identifier) ('\(task.name)') before its \(configuration.backgroundTimeAllowance) ran out, not even in its expiration handler",
            ])
        kill(bundleId, cause: .watchdog)
    }
}
