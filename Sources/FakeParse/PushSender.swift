import DeviceProtocol
import Foundation
import HarnessTimeline
import ParseModel

/// Parse Server's push pipeline around ParseModel's values: the `_PushStatus` row is written before the
/// client is answered; then (at once, or at `push_time`, kept across restarts) the badge change is
/// applied, the recipients are sent to in batches of 100 (each batch's devices at once, as Parse's APNs
/// adapter does), each device's outcome is kept, and the status is counted up to `succeeded`.
final class PushSender: Sendable {
    private let store: ParseStore
    private let provider: APNsProvider
    private let timeline: Timeline
    /// Forget the tokens APNs calls dead (`Unregistered`, `BadDeviceToken`), as Parse Server does with
    /// `PARSE_SERVER_CLEANUP_INVALID_INSTALLATIONS`.
    private let cleansDeadTokens: Bool
    private let inFlight = LockedState<[UUID: Task<Void, Never>]>([:])

    init(store: ParseStore, provider: APNsProvider, timeline: Timeline, cleansDeadTokens: Bool) {
        self.store = store
        self.provider = provider
        self.timeline = timeline
        self.cleansDeadTokens = cleansDeadTokens
    }

    /// Records the push and starts (or schedules) it; returns the `_PushStatus` id.
    func start(body: [String: JSONValue]) throws(ParseFailure) -> String {
        let now = Date()
        let request = try PushRequest(body: body, now: now.timeIntervalSince1970)
        let statusId = ParseObjectId.make()
        let pushTime = request.pushTime.map { ParseDate.string(Date(timeIntervalSince1970: $0)) }
        let status = PushStatusRecord.initial(
            id: statusId, request: request, body: body, now: ParseDate.string(now), pushTime: pushTime)
        do {
            try store.save(.pushStatus, status)
        } catch {
            throw ParseFailure(code: 1, "the database refused the push status: \(error)")
        }
        timeline.publish(
            .parsePushAccepted, source: "parse",
            [
                "pushStatusId": statusId,
                "recipients": "\(store.objects(.installation, matching: request.recipients).count)",
                "body": JSONValue.object(body).jsonString(),
            ])
        if let pushTime {
            timeline.publish(.parsePushScheduled, source: "parse", ["pushStatusId": statusId, "pushTime": pushTime])
        }
        run(statusId, request)
        return statusId
    }

    /// Schedules the pushes a previous run left `scheduled`.
    func resumeScheduled() {
        let query = try? ParseQuery(where: ["status": "scheduled"])
        for status in query.map({ store.objects(.pushStatus, matching: $0) }) ?? [] {
            guard let id = status["objectId"]?.stringValue else { continue }
            do {
                run(id, try PushRequest(status: status))
            } catch {
                finish(id, PushStatusRecord.failed(status, message: error.message, now: ParseDate.now()))
            }
        }
    }

    private func run(_ statusId: String, _ request: PushRequest) {
        let key = UUID()
        let task = Task { [self] in
            if let pushTime = request.pushTime {
                let wait = pushTime - Date().timeIntervalSince1970
                if wait > 0 {
                    do {
                        try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                    } catch {
                        return  // shut down: it stays scheduled, and goes out after the next start
                    }
                }
            }
            // Once sending, a push finishes even if the server is shutting down.
            await Task.detached { await self.send(statusId, request) }.value
        }
        inFlight.withLock { $0[key] = task }
        Task { [inFlight] in
            await task.value
            _ = inFlight.withLock { $0.removeValue(forKey: key) }
        }
    }

    private func send(_ statusId: String, _ request: PushRequest) async {
        guard var status = store.get(.pushStatus, statusId) else { return }
        if let expiration = request.expiration, Double(expiration) < Date().timeIntervalSince1970 {
            let expiry = ParseDate.string(Date(timeIntervalSince1970: Double(expiration)))
            finish(
                statusId,
                PushStatusRecord.failed(
                    status, message: "The push expired at \(expiry), before it was sent", now: ParseDate.now()))
            return
        }
        let recipients: [[String: JSONValue]]
        do {
            recipients = try applyBadge(request)
        } catch {
            finish(statusId, PushStatusRecord.failed(status, message: "\(error)", now: ParseDate.now()))
            return
        }
        status = PushStatusRecord.running(status, recipients: recipients.count, now: ParseDate.now())
        guard recipients.count > 0 else { return finish(statusId, status) }
        try? store.save(.pushStatus, status)
        let template = ApplePushTemplate(data: request.data, badgePerInstallation: request.badge != nil)
        for start in stride(from: 0, to: recipients.count, by: PushStatusRecord.batchSize) {
            let batch = recipients[start..<min(start + PushStatusRecord.batchSize, recipients.count)]
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for installation in batch {
                    group.addTask {
                        await self.deliver(
                            template.push(for: installation, expiration: request.expiration), to: installation, statusId
                        )
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let now = ParseDate.now()
            status = PushStatusRecord.tracked(status, outcomes, now: now)
            try? store.save(
                .pushOutcome, outcomes.map { $0.row(id: ParseObjectId.make(), pushStatusId: statusId, time: now) })
            if cleansDeadTokens { forgetDeadTokens(outcomes) }
            if status["status"] != "succeeded" { try? store.save(.pushStatus, status) }
        }
        finish(statusId, status)
    }

    /// Applies the push's badge change to its recipients (Parse Server does it as the master, to every
    /// installation with a token) and returns them as they are now, in objectId order.
    private func applyBadge(_ request: PushRequest) throws -> [[String: JSONValue]] {
        if let change = request.badge {
            let value: JSONValue =
                switch change {
                case .increment(let amount): ["__op": "Increment", "amount": .number(amount)]
                case .set(let number): .number(number)
                }
            try store.update(.installation, matching: request.recipients, try ObjectChanges(body: ["badge": value]))
        }
        return store.objects(.installation, matching: request.recipients).sorted {
            ($0["objectId"]?.stringValue ?? "") < ($1["objectId"]?.stringValue ?? "")
        }
    }

    private func deliver(_ push: ApplePush?, to installation: [String: JSONValue], _ statusId: String) async
        -> PushOutcome
    {
        let objectId = installation["objectId"]?.stringValue ?? ""
        guard let push, PushOutcome.applePlatforms.contains(PushOutcome.platform(of: installation)) else {
            let outcome = PushOutcome.noSender(installation)
            publishFailure(statusId, outcome)
            return outcome
        }
        var outcome = PushOutcome(
            installation: objectId, deviceToken: push.deviceToken, deviceType: "ios", transmitted: false)
        do {
            let answer = try await provider.send(push)
            outcome.status = answer.status
            outcome.apnsId = answer.apnsId
            outcome.reason = answer.reason
            outcome.transmitted = answer.status == 200
        } catch {
            outcome.error = "\(error)"
        }
        if outcome.transmitted {
            timeline.publish(
                .parsePushSent, source: "parse",
                [
                    "pushStatusId": statusId, "installation": objectId, "deviceToken": push.deviceToken,
                    "apnsId": outcome.apnsId ?? "",
                ])
        } else {
            publishFailure(statusId, outcome)
        }
        return outcome
    }

    private func publishFailure(_ statusId: String, _ outcome: PushOutcome) {
        var attributes = ["pushStatusId": statusId, "deviceToken": outcome.deviceToken]
        if let status = outcome.status { attributes["status"] = "\(status)" }
        if let reason = outcome.reason { attributes["reason"] = reason }
        if let error = outcome.error { attributes["error"] = error }
        timeline.publish(.parsePushFailed, source: "parse", EventAttributes(attributes))
    }

    private func forgetDeadTokens(_ outcomes: [PushOutcome]) {
        let dead = outcomes.filter(\.tokenIsDead).map { JSONValue.string($0.deviceToken) }
        guard !dead.isEmpty, let query = try? ParseQuery(where: ["deviceToken": ["$in": .array(dead)]]),
            let forget = try? ObjectChanges(body: ["deviceToken": ["__op": "Delete"]])
        else { return }
        _ = try? store.update(.installation, matching: query, forget)
    }

    private func finish(_ statusId: String, _ status: [String: JSONValue]) {
        try? store.save(.pushStatus, status)
        var attributes = [
            "pushStatusId": statusId, "status": status["status"]?.stringValue ?? "",
            "numSent": "\(Int(status["numSent"]?.numberValue ?? 0))",
            "numFailed": "\(Int(status["numFailed"]?.numberValue ?? 0))",
        ]
        if let message = status["errorMessage"]?["message"]?.stringValue { attributes["errorMessage"] = message }
        timeline.publish(.parsePushStatus, source: "parse", EventAttributes(attributes))
    }

    /// Lets pushes being sent finish; scheduled ones stay scheduled for the next start.
    func shutdown() async {
        for task in inFlight.withLock({ Array($0.values) }) {
            task.cancel()
            await task.value
        }
        await provider.shutdown()
    }
}
