import DeviceProtocol
import Foundation
import HarnessTimeline
import ParseModel

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

    /// A stored badge as a whole number in the range iOS shows; anything else (a fraction, a string, a
    /// number beyond the range) as the nearest such number, or nil when it is not a number.
    static func badge(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, number.isFinite else { return nil }
        let range = InputBounds.badge
        return Int(min(max(number.rounded(.down), Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// Records the push and starts sending it; returns the `_PushStatus` id.
    func start(query: ParseQuery, data: [String: JSONValue], expiration: Int?, rawBody: String) throws(ParseFailure)
        -> String
    {
        let statusId = ParseObjectId.make()
        let targets = store.objects(.installation, matching: query).filter {
            $0["deviceType"] == "ios" && $0["deviceToken"]?.stringValue != nil
        }
        let now = ParseDate.now()
        var status: [String: JSONValue] = [
            "objectId": .string(statusId), "createdAt": .string(now), "updatedAt": .string(now),
            "status": "pending", "source": "rest", "query": .string(JSONValue.object(query.source).jsonString()),
            "payload": .string(JSONValue.object(data).jsonString()), "numSent": 0, "numFailed": 0,
            "pushTime": .string(now),
        ]
        do {
            try store.save(.pushStatus, status)
        } catch {
            throw ParseFailure(code: 1, "the database refused the push status: \(error)")
        }
        timeline.publish(
            .parsePushAccepted, source: "parse",
            ["pushStatusId": statusId, "recipients": "\(targets.count)", "body": rawBody])
        let payload = PushPayload(
            data: (try? JSONSerialization.jsonObject(with: ParseJSON.encode(.object(data)))) as? [String: Any] ?? [:])
        let incrementsBadge = data["badge"]?.stringValue?.lowercased() == "increment"
        let notifications: [(String, APNsProvider.Notification)] = targets.map { installation in
            let badge = incrementsBadge ? Self.incremented(Self.badge(installation["badge"])) : nil
            let topic = installation["appIdentifier"]?.stringValue ?? ""
            return (
                installation["objectId"]?.stringValue ?? "",
                APNsProvider.Notification(
                    deviceToken: installation["deviceToken"]?.stringValue ?? "", topic: topic,
                    pushType: payload.pushType, priority: payload.priority, expiration: expiration,
                    collapseId: payload.collapseId, payload: payload.json(badge: badge))
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
            status["numSent"] = .number(Double(sent))
            status["numFailed"] = .number(Double(failed))
            status["updatedAt"] = .string(ParseDate.now())
            try? store.save(.pushStatus, status)
            timeline.publish(
                .parsePushStatus, source: "parse",
                [
                    "pushStatusId": statusId, "status": status["status"]?.stringValue ?? "", "numSent": "\(sent)",
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
