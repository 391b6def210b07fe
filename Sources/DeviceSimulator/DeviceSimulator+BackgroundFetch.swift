import DeviceProtocol
import HarnessTimeline

/// Background fetch: `performFetchWithCompletionHandler`, with the same 30 s rule as a silent push.
extension DeviceSimulator {
    /// The system decides to run a background fetch for the app now (``BackgroundFetchRule``).
    public func backgroundFetch(_ bundleId: String) async throws {
        let record = try record(bundleId)
        let decision = BackgroundFetchRule.decide(
            state: record.state, backgroundModes: record.app.backgroundModes, interval: pushes.fetch(bundleId).interval,
            sinceLastFetch: pushes.fetch(bundleId).lastFetch.map { policyNow - $0 },
            suppression: pushes.policy.suppression)
        let completionId = nextCompletionId
        nextCompletionId += 1
        switch decision {
        case .skipped(let reason):
            publish(.fetchSkipped, ["bundleId": bundleId, "reason": reason])
            return
        case .deliverInBackground:
            startFetch(bundleId, completionId: completionId, wake: "background")
        case .resumeInBackground:
            record.process?.resume()
            timers.cancel(.suspension(bundleId: bundleId))
            move(bundleId, .wake)
            startFetch(bundleId, completionId: completionId, wake: "resumed")
        case .launchInBackground:
            pushes.setLaunchFetch(completionId, for: bundleId)
            try await launch(bundleId, reason: .backgroundFetch)
        }
    }

    func startFetch(_ bundleId: String, completionId: Int, wake: String) {
        guard let connection = apps[bundleId]?.connection else { return }
        pushes.fetchStarted(bundleId, at: policyNow)
        startBudget(
            bundleId, completionId: completionId,
            handler: "application(_:performFetchWithCompletionHandler:)")
        publish(.fetchStarted, ["bundleId": bundleId, "completionId": "\(completionId)", "wake": wake])
        connection.notify(DeviceMethod.performFetch, PerformFetchParams(completionId: completionId))
    }
}
