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
        var headers: [(name: String, value: String)]
        var body: Data
        var apnsId: String
        var outcome: Result<AcceptedNotification, APNsReason>
        var decision: String
        var receivedAt: Date
        var deliveredAt: Date?

        mutating func apply(_ fate: DeviceGateway.Fate) {
            decision = fate.decision
            if let deliveredAt = fate.deliveredAt { self.deliveredAt = deliveredAt }
        }

        var deviceToken: String? {
            switch outcome {
            case .success(let notification): return notification.deviceToken
            case .failure:
                let path = headers.first { $0.name == ":path" }?.value ?? ""
                return path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)).lowercased() : nil
            }
        }

        var entry: Entry {
            var fields: [String: String] = [:]
            for (name, value) in headers { fields[name] = value }
            switch outcome {
            case .success(let notification):
                return Entry(
                    apnsId: apnsId, deviceToken: notification.deviceToken, status: 200, reason: nil, decision: decision,
                    receivedAt: receivedAt, deliveredAt: deliveredAt, headers: fields, payload: notification.payload,
                    notification: notification)
            case .failure(let reason):
                return Entry(
                    apnsId: apnsId, deviceToken: deviceToken, status: reason.status, reason: reason.reason,
                    decision: decision, receivedAt: receivedAt, deliveredAt: nil, headers: fields,
                    payload: String(decoding: body, as: UTF8.self), notification: nil)
            }
        }
    }

    private struct State {
        /// With a retention: the generation before `records`, dropped whole when `records` fills up.
        var older: [Record] = []
        var records: [Record] = []
        /// How many of the oldest records were forgotten; positions below count from the first ever.
        var forgotten = 0

        mutating func apply(_ fate: DeviceGateway.Fate, at position: Int) {
            let local = position - forgotten
            if local >= 0, local < older.count {
                older[local].apply(fate)
            } else if local >= older.count, local - older.count < records.count {
                records[local - older.count].apply(fate)
            }
        }
        /// Where each notification still held or stored is (its position counted from the first
        /// record ever), so decisions update it without a scan.
        var acceptedIndex: [String: Int] = [:]
        /// Decisions taken before their entry was appended (a decision made by a task that ran before
        /// the request's own thread got to the log); applied on append.
        var early: [String: DeviceGateway.Fate] = [:]
    }

    private let state = LockedState(State())
    private let retention: Int?

    /// - Parameter retention: keep only the newest this many entries (at least; older ones are
    ///   forgotten in batches); nil keeps them all.
    init(retention: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "the log must keep at least one entry")
        self.retention = retention
    }

    /// Records a request with the outcome of its validation and, for an accepted one, what the gateway
    /// decided at once.
    func append(
        _ request: ProviderRequest, apnsId: String, outcome: Result<AcceptedNotification, APNsReason>,
        fate: DeviceGateway.Fate? = nil
    ) {
        // The provider token is the largest header and is never shown: not kept.
        var headers = request.headers
        if let index = headers.firstIndex(where: { $0.name == "authorization" }) {
            headers[index].value = "bearer <redacted>"
        }
        let accepted: Bool
        if case .success = outcome { accepted = true } else { accepted = false }
        var record = Record(
            headers: headers, body: accepted ? Data() : request.body, apnsId: apnsId, outcome: outcome,
            decision: accepted ? "accepted" : "rejected", receivedAt: Date())
        if let fate { record.apply(fate) }
        let forgotten = state.withLock { state -> [Record] in
            // Only a notification still held or stored can be decided on again.
            if accepted, record.decision == "accepted" || record.decision == "stored" {
                state.acceptedIndex[apnsId] = state.forgotten + state.older.count + state.records.count
                if !state.early.isEmpty, let fate = state.early.removeValue(forKey: apnsId) { record.apply(fate) }
            }
            state.records.append(record)
            // Forgetting a whole generation at a time keeps the cost per entry constant; its records
            // are freed after the lock is released.
            guard let retention, state.records.count >= retention else { return [] }
            let dropped = state.older
            state.forgotten += dropped.count
            state.older = state.records
            state.records = []
            state.records.reserveCapacity(retention)
            let first = state.forgotten
            if !dropped.isEmpty { state.acceptedIndex = state.acceptedIndex.filter { $0.value >= first } }
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
            state.apply(fate, at: position)
        }
    }

    func removeAll() { state.withLock { $0 = State() } }

    /// How many of the oldest entries were dropped to keep the log within its retention.
    public var forgottenCount: Int { state.withLock { $0.forgotten } }

    /// Every entry, oldest first, optionally only those for one device token.
    public func entries(deviceToken: String? = nil) -> [Entry] {
        let token = deviceToken?.lowercased()
        let (older, newer) = state.withLock { ($0.older, $0.records) }
        let records = older + newer
        return records.compactMap { record in
            guard token == nil || record.deviceToken == token else { return nil }
            return record.entry
        }
    }

    public var all: [Entry] { entries() }
}
