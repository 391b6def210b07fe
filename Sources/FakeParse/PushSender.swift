import DeviceProtocol
import Foundation
import HarnessTimeline
import ParseModel

/// Parse Server's push pipeline around ParseModel's values: the `_PushStatus` row is written before the
/// client is answered; then (at once, or at `push_time`, kept across restarts) the badge change is
/// applied, the recipients are sent to in batches of 100 (each batch's devices at once, as Parse's APNs
/// adapter does), each device's outcome is kept, and the status is counted up to `succeeded`.
///
/// Every push is a child task of ``run()``. A write the database refuses after the client was answered
/// is published as `parse.store.failed`, never dropped in silence.
final class PushSender: Sendable {
    private let store: ParseStore
    private let provider: APNsProvider
    private let timeline: Timeline
    /// Forget the tokens APNs calls dead (`Unregistered`, `BadDeviceToken`), as Parse Server does with
    /// `PARSE_SERVER_CLEANUP_INVALID_INSTALLATIONS`.
    private let cleansDeadTokens: Bool
    /// The pushes to send, taken by ``run()``; finished by ``stop()``.
    private let jobs = AsyncStream<Job>.makeStream()

    struct Job: Sendable {
        var statusId: String
        var request: PushRequest
    }

    init(store: ParseStore, provider: APNsProvider, timeline: Timeline, cleansDeadTokens: Bool) {
        self.store = store
        self.provider = provider
        self.timeline = timeline
        self.cleansDeadTokens = cleansDeadTokens
    }

    /// Records the push and starts (or schedules) it; returns the `_PushStatus` id.
    func start(body: [String: JSONValue]) async throws(ParseFailure) -> String {
        let now = Date()
        let request = try PushRequest(body: body, now: now.timeIntervalSince1970)
        // A `where` whose `$regex` runs past its budget is refused here, before anything is stored.
        let recipients = try store.objects(.installation, matching: request.recipients).count
        let statusId = ParseObjectId.make()
        let pushTime = request.pushTime.map { ParseDate.string(Date(timeIntervalSince1970: $0)) }
        let status = PushStatusRecord.initial(
            id: statusId, request: request, body: body, now: ParseDate.string(now), pushTime: pushTime)
        do {
            try await store.save(.pushStatus, status)
        } catch {
            throw ParseFailure(code: 1, "the database refused the push status: \(error)")
        }
        timeline.publish(
            .parsePushAccepted, source: "parse",
            [
                "pushStatusId": statusId,
                "recipients": "\(recipients)",
                "body": JSONValue.object(body).jsonString(),
            ])
        if let pushTime {
            timeline.publish(.parsePushScheduled, source: "parse", ["pushStatusId": statusId, "pushTime": pushTime])
        }
        await enqueue(statusId, request)
        return statusId
    }

    /// Picks up what a previous run left: a `scheduled` push is scheduled again; one left `pending` or
    /// `running` (the process ended while it was being sent) is marked `failed`, as its devices may or
    /// may not have had it and sending it twice would be worse.
    func resume() async {
        // A fixed query without `$regex`: neither compiling nor matching it can fail.
        let unfinished: [PushStatusRecord.State] = [.scheduled, .pending, .running]
        let query = try! ParseQuery(where: ["status": ["$in": .array(unfinished.map { .string($0.rawValue) })]])
        for status in try! store.objects(.pushStatus, matching: query) {
            guard let id = status["objectId"]?.stringValue else { continue }
            guard PushStatusRecord.state(of: status) == .scheduled else {
                await finish(id, PushStatusRecord.failed(status, message: Self.interrupted, now: ParseDate.now()))
                continue
            }
            do {
                await enqueue(id, try PushRequest(status: status))
                timeline.publish(
                    .parsePushScheduled, source: "parse",
                    ["pushStatusId": id, "pushTime": status["pushTime"]?.stringValue ?? ""])
            } catch {
                await finish(id, PushStatusRecord.failed(status, message: error.message, now: ParseDate.now()))
            }
        }
    }

    static let interrupted = "FakeParse stopped while the push was being sent; it was not resumed"

    static let stopping = "FakeParse was stopping when the push came; it was not sent"

    /// Hands a push to ``run()``; after ``stop()`` it is marked failed instead, as it will not be sent.
    private func enqueue(_ statusId: String, _ request: PushRequest) async {
        if case .terminated = jobs.continuation.yield(Job(statusId: statusId, request: request)),
            let status = store.get(.pushStatus, statusId)
        {
            await finish(statusId, PushStatusRecord.failed(status, message: Self.stopping, now: ParseDate.now()))
        }
    }

    /// Sends every push handed to it, each in a child task, until ``stop()`` (or cancellation): then
    /// scheduled pushes stop waiting (they stay scheduled, and go out after the next start), pushes
    /// being sent finish, and the APNs connection is closed.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs.stream {
                group.addTask { await self.perform(job) }
            }
            group.cancelAll()
        }
        await provider.shutdown()
    }

    /// No more pushes: ``run()`` returns once those being sent are done.
    func stop() {
        jobs.continuation.finish()
    }

    /// Closes the APNs connection of a sender whose ``run()`` never ran.
    func closeProvider() async {
        await provider.shutdown()
    }

    private func perform(_ job: Job) async {
        if let pushTime = job.request.pushTime {
            let wait = pushTime - Date().timeIntervalSince1970
            if wait > 0 {
                do {
                    try await Task.sleep(for: .milliseconds(Int64(min(wait, 1e9) * 1000)))
                } catch {
                    return  // stopped: it stays scheduled, and goes out after the next start
                }
            }
        }
        // Once sending, a push finishes even when the sender is stopped: the group's cancellation does
        // not reach it, and run() still waits for it.
        await uncancelled { await self.send(job.statusId, job.request) }
    }

    private func send(_ statusId: String, _ request: PushRequest) async {
        guard var status = store.get(.pushStatus, statusId) else { return }
        if let expiration = request.expiration, Double(expiration) < Date().timeIntervalSince1970 {
            let expiry = ParseDate.string(Date(timeIntervalSince1970: Double(expiration)))
            let message = "The push expired at \(expiry), before it was sent"
            return await finish(statusId, PushStatusRecord.failed(status, message: message, now: ParseDate.now()))
        }
        var recipients: [[String: JSONValue]]
        do {
            recipients = try store.objects(.installation, matching: request.recipients)
        } catch {
            return await finish(statusId, PushStatusRecord.failed(status, message: error.message, now: ParseDate.now()))
        }
        status = PushStatusRecord.running(status, recipients: recipients.count, now: ParseDate.now())
        do {
            // The badge change and the status that says it is made go in one transaction: a push cut
            // short by a crash is never sent again with its badges raised twice.
            if let change = request.badge {
                recipients = try await store.update(
                    .installation, matching: request.recipients, try Self.changes(change), saving: [status])
            } else {
                try await store.save(.pushStatus, status)
            }
        } catch {
            let message = "\(error)"
            return await finish(statusId, PushStatusRecord.failed(status, message: message, now: ParseDate.now()))
        }
        recipients.sort { ($0["objectId"]?.stringValue ?? "") < ($1["objectId"]?.stringValue ?? "") }
        guard !recipients.isEmpty else { return await finish(statusId, status) }
        let template = ApplePushTemplate(data: request.data, badgePerInstallation: request.badge != nil)
        let batches = stride(from: 0, to: recipients.count, by: PushStatusRecord.batchSize).map {
            recipients[$0..<min($0 + PushStatusRecord.batchSize, recipients.count)]
        }
        // Batches go out side by side, as Parse Server's push queue runs them; each is counted in as it ends.
        await withTaskGroup(of: [PushOutcome].self) { group in
            var started = 0
            while started < min(Self.batchesAtOnce, batches.count) {
                let batch = batches[started]
                group.addTask { await self.send(batch, template, request, statusId) }
                started += 1
            }
            for await outcomes in group {
                let now = ParseDate.now()
                status = PushStatusRecord.tracked(status, outcomes, now: now)
                // The batch's outcomes and the status counted up to them, in one transaction (the final
                // status is written by finish).
                let rows = outcomes.map { $0.row(id: ParseObjectId.make(), pushStatusId: statusId, time: now) }
                let counted =
                    PushStatusRecord.state(of: status) != .succeeded ? [(ParseClass.pushStatus, [status])] : []
                do {
                    try await store.save([(.pushOutcome, rows)] + counted)
                } catch {
                    storeFailed("the batch's \(rows.count) outcomes", statusId, error)
                }
                if cleansDeadTokens { await forgetDeadTokens(outcomes, statusId) }
                if started < batches.count {
                    let batch = batches[started]
                    group.addTask { await self.send(batch, template, request, statusId) }
                    started += 1
                }
            }
        }
        await finish(statusId, status)
    }

    /// Batches in flight at once: 1,000 devices, the streams Apple lets one connection have open.
    static let batchesAtOnce = 10

    /// One batch: its devices' notifications go out together, as Parse's APNs adapter sends them.
    private func send(
        _ batch: ArraySlice<[String: JSONValue]>, _ template: ApplePushTemplate, _ request: PushRequest,
        _ statusId: String
    ) async -> [PushOutcome] {
        var outcomes: [PushOutcome] = []
        outcomes.reserveCapacity(batch.count)
        var pushes: [ApplePush] = []
        var sentTo: [[String: JSONValue]] = []
        for installation in batch {
            guard let push = template.push(for: installation, expiration: request.expiration),
                PushOutcome.applePlatforms.contains(PushOutcome.platform(of: installation))
            else {
                let outcome = PushOutcome.noSender(installation)
                publishFailure(statusId, outcome)
                outcomes.append(outcome)
                continue
            }
            pushes.append(push)
            sentTo.append(installation)
        }
        let answers = await provider.send(pushes)
        for ((push, installation), answer) in zip(zip(pushes, sentTo), answers) {
            outcomes.append(outcome(of: push, to: installation, answer, statusId))
        }
        return outcomes
    }

    /// A push's badge change as a field operation on `badge`.
    static func changes(_ change: PushRequest.BadgeChange) throws -> ObjectChanges {
        switch change {
        case .increment(let amount):
            try ObjectChanges(body: ["badge": ["__op": "Increment", "amount": .number(amount)]])
        case .set(let number): try ObjectChanges(body: ["badge": .number(number)])
        }
    }

    private func outcome(
        of push: ApplePush, to installation: [String: JSONValue],
        _ answer: Result<APNsProvider.Outcome, APNsProvider.Failure>,
        _ statusId: String
    ) -> PushOutcome {
        let objectId = installation["objectId"]?.stringValue ?? ""
        var outcome = PushOutcome(
            installation: objectId, deviceToken: push.deviceToken, deviceType: "ios", transmitted: false)
        switch answer {
        case .success(let answer):
            outcome.status = answer.status
            outcome.apnsId = answer.apnsId
            outcome.reason = answer.reason
            outcome.transmitted = answer.status == 200
        case .failure(let failure):
            outcome.error = failure.description
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

    private func forgetDeadTokens(_ outcomes: [PushOutcome], _ statusId: String) async {
        let dead = outcomes.filter(\.tokenIsDead).map { JSONValue.string($0.deviceToken) }
        guard !dead.isEmpty else { return }
        // A fixed query and a fixed operation, without `$regex`: neither can fail to compile.
        let query = try! ParseQuery(where: ["deviceToken": ["$in": .array(dead)]])
        let forget = try! ObjectChanges(body: ["deviceToken": ["__op": "Delete"]])
        do {
            _ = try await store.update(.installation, matching: query, forget)
        } catch {
            storeFailed("forgetting \(dead.count) dead device tokens", statusId, error)
        }
    }

    /// A write refused after the client was answered: on the timeline, with what was not stored.
    private func storeFailed(_ what: String, _ statusId: String, _ error: any Error) {
        timeline.publish(
            .parseStoreFailed, source: "parse", ["pushStatusId": statusId, "what": what, "error": "\(error)"])
    }

    private func finish(_ statusId: String, _ status: [String: JSONValue]) async {
        do {
            try await store.save(.pushStatus, status)
        } catch {
            storeFailed("the push status \(status["status"]?.stringValue ?? "")", statusId, error)
        }
        var attributes = [
            "pushStatusId": statusId, "status": status["status"]?.stringValue ?? "",
            "numSent": "\(Int(status["numSent"]?.numberValue ?? 0))",
            "numFailed": "\(Int(status["numFailed"]?.numberValue ?? 0))",
        ]
        if let message = status["errorMessage"]?["message"]?.stringValue { attributes["errorMessage"] = message }
        timeline.publish(.parsePushStatus, source: "parse", EventAttributes(attributes))
    }
}
