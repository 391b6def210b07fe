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

    private struct State {
        /// Entries without their headers, which are kept as they arrived and made into a dictionary
        /// only when read: most entries are never read.
        var entries: [Entry] = []
        var requestHeaders: [[(name: String, value: String)]] = []
        /// Where each accepted notification's entry is, so decisions update it without a scan.
        var acceptedIndex: [String: Int] = [:]
        /// Decisions taken before their entry was appended (a decision made by a task that ran before
        /// the request's own thread got to the log); applied on append.
        var early: [String: DeviceGateway.Fate] = [:]
    }

    private let state = LockedState(State())

    /// Records a request with the outcome of its validation and, for an accepted one, what the gateway
    /// decided at once.
    func append(
        _ request: ProviderRequest, apnsId: String, outcome: Result<AcceptedNotification, APNsReason>,
        fate: DeviceGateway.Fate? = nil
    ) {
        let path = request.first(":path") ?? ""
        let token = path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)).lowercased() : nil
        var entry: Entry
        switch outcome {
        case .success(let notification):
            entry = Entry(
                apnsId: apnsId, deviceToken: notification.deviceToken, status: 200, reason: nil,
                decision: fate?.decision ?? "accepted", receivedAt: Date(), deliveredAt: fate?.deliveredAt,
                headers: [:], payload: notification.payload, notification: notification)
        case .failure(let reason):
            entry = Entry(
                apnsId: apnsId, deviceToken: token, status: reason.status, reason: reason.reason, decision: "rejected",
                receivedAt: Date(), headers: [:], payload: String(decoding: request.body, as: UTF8.self),
                notification: nil)
        }
        state.withLock { state in
            // Only a notification still held or stored can be decided on again.
            if entry.status == 200, entry.decision == "accepted" || entry.decision == "stored" {
                state.acceptedIndex[apnsId] = state.entries.count
                if !state.early.isEmpty, let fate = state.early.removeValue(forKey: apnsId) { entry.apply(fate) }
            }
            state.entries.append(entry)
            state.requestHeaders.append(request.headers)
        }
    }

    func update(_ apnsId: String, to fate: DeviceGateway.Fate) {
        state.withLock { state in
            guard let index = state.acceptedIndex[apnsId] else {
                state.early[apnsId] = fate
                return
            }
            state.entries[index].apply(fate)
        }
    }

    func removeAll() { state.withLock { $0 = State() } }

    /// Every entry, oldest first, optionally only those for one device token.
    public func entries(deviceToken: String? = nil) -> [Entry] {
        let token = deviceToken?.lowercased()
        return state.withLock { state in
            zip(state.entries, state.requestHeaders).compactMap { entry, headers in
                guard token == nil || entry.deviceToken == token else { return nil }
                var entry = entry
                for (name, value) in headers {
                    entry.headers[name] = name == "authorization" ? "bearer <redacted>" : value
                }
                return entry
            }
        }
    }

    public var all: [Entry] { entries() }
}

extension NotificationLog.Entry {
    fileprivate mutating func apply(_ fate: DeviceGateway.Fate) {
        decision = fate.decision
        if let deliveredAt = fate.deliveredAt { self.deliveredAt = deliveredAt }
    }
}
