import Foundation
import HarnessTimeline

/// Every request FakeAPNs decided on, with what became of it, for the inspection API and assertions.
public final class NotificationLog: Sendable {
    public struct Entry: Sendable, Codable, Equatable {
        public var apnsId: String
        public var deviceToken: String?
        public var status: Int
        public var reason: String?
        /// `accepted`, `rejected`, `delivered`, `stored`, `replaced`, `coalesced`, `expired` or `discarded`.
        public var decision: String
        public var receivedAt: Date
        public var deliveredAt: Date?
        /// The request's header fields, pseudo-headers included; the provider token is redacted.
        public var headers: [String: String]
        public var payload: String
        public var notification: AcceptedNotification?
    }

    /// What is kept of a request: its fields as they arrived, the entry is made from them only when
    /// read (most entries never are).
    private struct Record {
        /// An accepted request's push, shared with its events; a refused one's reason.
        enum Outcome {
            case accepted(AcceptedPush)
            case refused(APNsReason)
        }

        var headers: [(name: String, value: String)]
        var body: Data
        var apnsId: String
        var outcome: Outcome
        var decision: DeviceGateway.Fate.Decision
        var receivedAt: Date
        var deliveredAt: Date?

        /// A request's record as it arrives: accepted, or refused. The provider token is kept as the
        /// request's own string (shared, not copied) and redacted whenever an entry is read; an accepted
        /// request's body is its push's payload.
        init(_ request: ProviderRequest, apnsId: String, outcome: Outcome, receivedAt: Date) {
            let accepted: Bool
            if case .accepted = outcome { accepted = true } else { accepted = false }
            headers = request.headers
            body = accepted ? Data() : request.body
            self.apnsId = apnsId
            self.outcome = outcome
            decision = accepted ? .accepted : .rejected
            self.receivedAt = receivedAt
        }

        mutating func apply(_ fate: DeviceGateway.Fate) {
            decision = fate.decision
            if let deliveredAt = fate.deliveredAt { self.deliveredAt = deliveredAt }
        }

        var deviceToken: String? {
            switch outcome {
            case .accepted(let push): return push.notification.deviceToken
            case .refused:
                let path = headers.first { $0.name == ":path" }?.value ?? ""
                return path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)).lowercased() : nil
            }
        }

        var entry: Entry {
            var fields: [String: String] = [:]
            // The provider token is the largest header and is never shown.
            for (name, value) in headers { fields[name] = name == "authorization" ? "bearer <redacted>" : value }
            switch outcome {
            case .accepted(let push):
                let notification = push.notification
                return Entry(
                    apnsId: apnsId, deviceToken: notification.deviceToken, status: 200, reason: nil,
                    decision: decision.rawValue,
                    receivedAt: receivedAt, deliveredAt: deliveredAt, headers: fields, payload: notification.payload,
                    notification: notification)
            case .refused(let reason):
                return Entry(
                    apnsId: apnsId, deviceToken: deviceToken, status: reason.status, reason: reason.reason,
                    decision: decision.rawValue, receivedAt: receivedAt, deliveredAt: nil, headers: fields,
                    payload: String(decoding: body, as: UTF8.self), notification: nil)
            }
        }
    }

    private struct State {
        /// The records kept: all of them, or the newest within the retention and the budget.
        var records: BoundedHistory<Record>
        /// Where each notification still held or stored is (its position counted from the first
        /// record ever), so decisions update it without a scan.
        var acceptedIndex: [String: Int] = [:]
        /// Decisions taken before their entry was appended (a decision made by a task that ran before
        /// the request's own thread got to the log); applied on append. Decisions about entries already
        /// forgotten land here too, so they turn over with the records: a decision waits at most two
        /// renewals of the records for its entry (``BoundedHistory/renewals``).
        var early: [String: DeviceGateway.Fate] = [:]
        var earlier: [String: DeviceGateway.Fate] = [:]
    }

    private let state: LockedState<State>
    private let limited: Bool

    /// - Parameters:
    ///   - retention: keep only the newest entries, this many unless the budget runs out first
    ///     (older ones are forgotten one at a time); nil and no budget keep them all.
    ///   - budget: and never more than this many bytes of them, as ``estimatedBytes(headers:body:)``
    ///     counts them (``BoundedHistory``); nil: no memory limit.
    init(retention: Int? = nil, budget: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "the log must keep at least one entry")
        state = LockedState(State(records: BoundedHistory(retention: retention, budget: budget)))
        limited = retention != nil || budget != nil
    }

    /// What keeping a request's record costs, estimated generously: its fields' and body's bytes (an
    /// accepted request's body is kept as its notification's payload), 64 bytes more for each field
    /// (its strings' storage and its slot), and 512 for the record itself, the accepted notification's
    /// other fields and the log's index.
    static func estimatedBytes(headers: [(name: String, value: String)], body: Data) -> Int {
        var bytes = 512 + body.count
        for (name, value) in headers { bytes += name.utf8.count + value.utf8.count + 64 }
        return bytes
    }

    /// Records a request with the outcome of its validation and, for an accepted one, what the gateway
    /// decided at once.
    func append(
        _ request: ProviderRequest, apnsId: String, outcome: Result<AcceptedNotification, APNsReason>,
        fate: DeviceGateway.Fate? = nil, receivedAt: Date = Date()
    ) {
        switch outcome {
        case .success(let notification):
            append(request, accepted: AcceptedPush(notification, environment: ""), fate: fate, receivedAt: receivedAt)
        case .failure(let reason):
            let record = Record(request, apnsId: apnsId, outcome: .refused(reason), receivedAt: receivedAt)
            append(request, record: record, fate: fate)
        }
    }

    /// Records an accepted request, its push shared with its events.
    func append(_ request: ProviderRequest, accepted push: AcceptedPush, fate: DeviceGateway.Fate?, receivedAt: Date) {
        let record = Record(request, apnsId: push.notification.apnsId, outcome: .accepted(push), receivedAt: receivedAt)
        append(request, record: record, fate: fate)
    }

    private func append(_ request: ProviderRequest, record made: consuming Record, fate: DeviceGateway.Fate?) {
        let apnsId = made.apnsId
        let accepted = made.decision == .accepted
        if let fate { made.apply(fate) }
        let bytes = limited ? Self.estimatedBytes(headers: request.headers, body: request.body) : 0
        // Moved into the records through an optional the lock's closure takes it from: a copy would
        // retain each of its references, and release them all again when this one went.
        var moving: Record? = consume made
        let forgotten = state.withLock { state -> Record? in
            var record = moving.take()!
            // Only a notification still held or stored can be decided on again.
            if accepted, record.decision == .accepted || record.decision == .stored {
                state.acceptedIndex[apnsId] = state.records.nextPosition
                if !(state.early.isEmpty && state.earlier.isEmpty),
                    let fate = state.early.removeValue(forKey: apnsId) ?? state.earlier.removeValue(forKey: apnsId)
                {
                    record.apply(fate)
                }
            }
            // The oldest records are forgotten as new ones come; the one returned is freed after the
            // lock is released. What goes with the records turns over when they have been renewed.
            let renewals = state.records.renewals
            let dropped = state.records.append(consume record, bytes: bytes)
            if state.records.renewals != renewals {
                if !(state.early.isEmpty && state.earlier.isEmpty) {
                    state.earlier = state.early
                    state.early = [:]
                }
                if !state.acceptedIndex.isEmpty {
                    let first = state.records.forgotten
                    state.acceptedIndex = state.acceptedIndex.filter { $0.value >= first }
                }
            }
            return dropped
        }
        _ = consume forgotten
    }

    func update(_ apnsId: String, to fate: DeviceGateway.Fate) {
        state.withLock { state in
            guard let position = state.acceptedIndex[apnsId] else {
                state.early[apnsId] = fate
                return
            }
            state.records.update(position: position) { $0.apply(fate) }
        }
    }

    func removeAll() {
        state.withLock { state in
            state.records.removeAll()
            state.acceptedIndex = [:]
            state.early = [:]
            state.earlier = [:]
        }
    }

    /// Decisions waiting for an entry (one not appended yet, or one already forgotten).
    var waitingDecisions: Int { state.withLock { $0.early.count + $0.earlier.count } }

    /// How many of the oldest entries were dropped to keep the log within its retention.
    public var forgottenCount: Int { state.withLock { $0.records.forgotten } }

    /// Every entry, oldest first, optionally only those for one device token.
    public func entries(deviceToken: String? = nil) -> [Entry] {
        let token = deviceToken?.lowercased()
        let history = state.withLock { $0.records }
        var entries: [Entry] = []
        history.forEach { record in
            if token == nil || record.deviceToken == token { entries.append(record.entry) }
        }
        return entries
    }

    public var all: [Entry] { entries() }
}
