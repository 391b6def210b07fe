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
        var entries: [Entry] = []
        /// Where each accepted notification's entry is, so decisions update it without a scan.
        var acceptedIndex: [String: Int] = [:]
    }

    private let state = LockedState(State())

    func append(_ request: ProviderRequest, apnsId: String, outcome: Result<AcceptedNotification, APNsReason>) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            headers[name] = name == "authorization" ? "bearer <redacted>" : value
        }
        let path = request.first(":path") ?? ""
        let token = path.hasPrefix("/3/device/") ? String(path.dropFirst("/3/device/".count)).lowercased() : nil
        let entry: Entry
        switch outcome {
        case .success(let notification):
            entry = Entry(
                apnsId: apnsId, deviceToken: notification.deviceToken, status: 200, reason: nil, decision: "accepted",
                receivedAt: Date(), headers: headers, payload: notification.payload, notification: notification)
        case .failure(let reason):
            entry = Entry(
                apnsId: apnsId, deviceToken: token, status: reason.status, reason: reason.reason, decision: "rejected",
                receivedAt: Date(), headers: headers, payload: String(decoding: request.body, as: UTF8.self),
                notification: nil)
        }
        state.withLock { state in
            if entry.status == 200 { state.acceptedIndex[apnsId] = state.entries.count }
            state.entries.append(entry)
        }
    }

    func update(_ apnsId: String, _ change: (inout Entry) -> Void) {
        state.withLock { state in
            guard let index = state.acceptedIndex[apnsId] else { return }
            change(&state.entries[index])
        }
    }

    func removeAll() { state.withLock { $0 = State() } }

    /// Every entry, oldest first, optionally only those for one device token.
    public func entries(deviceToken: String? = nil) -> [Entry] {
        state.withLock { state in
            guard let deviceToken else { return state.entries }
            return state.entries.filter { $0.deviceToken == deviceToken.lowercased() }
        }
    }

    public var all: [Entry] { entries() }
}
