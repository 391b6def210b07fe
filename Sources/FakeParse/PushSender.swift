import Foundation
import HarnessTimeline

/// Sends a push to its installations in the background, after the `_PushStatus` row exists, as Parse
/// Server does, and keeps the status's counts.
final class PushSender: Sendable {
    private let store: ParseStore
    private let provider: APNsProvider
    private let timeline: Timeline
    private let inFlight = LockedState<[UUID: Task<Void, Never>]>([:])

    init(store: ParseStore, provider: APNsProvider, timeline: Timeline) {
        self.store = store
        self.provider = provider
        self.timeline = timeline
    }

    /// The badge an `Increment` push shows: one more than the installation's, held to the range iOS
    /// shows (a stored badge is the client's number: it may be anything).
    static func incremented(_ badge: Int?) -> Int {
        let range = InputBounds.badge
        return min(max(badge ?? 0, range.lowerBound), range.upperBound - 1) + 1
    }

    /// Records the push and starts sending it; returns the `_PushStatus` id.
    func start(query: InstallationQuery, data: [String: Any], expiration: Int?, rawBody: String) throws -> String {
        let statusId = ParseObjectId.make()
        let targets = try store.installations().filter {
            query.matches($0) && ($0["deviceType"] as? String) == "ios" && ($0["deviceToken"] as? String) != nil
        }
        var status: [String: Any] = [
            "objectId": statusId, "createdAt": ParseDate.now(), "status": "pending", "source": "rest",
            "query": ParseStore.encode(query.constraints), "payload": ParseStore.encode(data), "numSent": 0,
            "numFailed": 0, "pushTime": ParseDate.now(),
        ]
        try store.savePushStatus(status)
        timeline.publish(
            .parsePushAccepted, source: "parse",
            ["pushStatusId": statusId, "recipients": "\(targets.count)", "body": rawBody])
        let payload = PushPayload(data: data)
        let incrementsBadge = (data["badge"] as? String)?.lowercased() == "increment"
        let notifications: [(String, APNsProvider.Notification)] = targets.map { installation in
            let badge = incrementsBadge ? Self.incremented(installation["badge"] as? Int) : nil
            let topic = installation["appIdentifier"] as? String ?? ""
            return (
                installation["objectId"] as? String ?? "",
                APNsProvider.Notification(
                    deviceToken: installation["deviceToken"] as! String, topic: topic, pushType: payload.pushType,
                    priority: payload.priority, expiration: expiration, collapseId: payload.collapseId,
                    payload: payload.json(badge: badge))
            )
        }
        let key = UUID()
        let sendAll = Task { [provider, timeline, store] in
            var sent = 0
            var failed = 0
            for (objectId, notification) in notifications {
                do {
                    let outcome = try await provider.send(notification)
                    if outcome.status == 200 {
                        sent += 1
                        timeline.publish(
                            .parsePushSent, source: "parse",
                            [
                                "pushStatusId": statusId, "installation": objectId,
                                "deviceToken": notification.deviceToken, "apnsId": outcome.apnsId ?? "",
                            ])
                    } else {
                        failed += 1
                        timeline.publish(
                            .parsePushFailed, source: "parse",
                            [
                                "pushStatusId": statusId, "deviceToken": notification.deviceToken,
                                "status": "\(outcome.status)", "reason": outcome.reason ?? "",
                            ])
                    }
                } catch {
                    failed += 1
                    timeline.publish(
                        .parsePushFailed, source: "parse",
                        ["pushStatusId": statusId, "deviceToken": notification.deviceToken, "error": "\(error)"])
                }
            }
            status["status"] = failed > 0 && sent == 0 && !notifications.isEmpty ? "failed" : "succeeded"
            status["numSent"] = sent
            status["numFailed"] = failed
            status["updatedAt"] = ParseDate.now()
            try? store.savePushStatus(status)
            timeline.publish(
                .parsePushStatus, source: "parse",
                [
                    "pushStatusId": statusId, "status": status["status"] as? String ?? "", "numSent": "\(sent)",
                    "numFailed": "\(failed)",
                ])
        }
        inFlight.withLock { $0[key] = sendAll }
        Task { [inFlight] in
            await sendAll.value
            _ = inFlight.withLock { $0.removeValue(forKey: key) }
        }
        return statusId
    }

    func shutdown() async {
        for task in inFlight.withLock({ Array($0.values) }) { await task.value }
        await provider.shutdown()
    }
}
