import Foundation
import HarnessTimeline

/// Every request FakeAPNs decided on, for the inspection API and for assertions.
public final class NotificationLog: Sendable {
    public struct Entry: Sendable, Codable, Equatable {
        public var apnsId: String
        public var path: String
        public var status: Int
        public var reason: String?
        public var receivedAt: Date
        public var notification: AcceptedNotification?

        init(notification: AcceptedNotification, status: Int, reason: String?, receivedAt: Date) {
            self.apnsId = notification.apnsId
            self.path = "/3/device/" + notification.deviceToken
            self.status = status
            self.reason = reason
            self.receivedAt = receivedAt
            self.notification = notification
        }

        init(rejectedPath: String, apnsId: String, status: Int, reason: String) {
            self.apnsId = apnsId
            self.path = rejectedPath
            self.status = status
            self.reason = reason
            self.receivedAt = Date()
            self.notification = nil
        }
    }

    private let entries = LockedState<[Entry]>([])

    func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    public var all: [Entry] { entries.withLock { $0 } }
}
