import Foundation
import HarnessTimeline
import Testing

@testable import FakeAPNs

/// ``AcceptedPush``: the fields each event reads from the one object a push makes, a view per row, and
/// the log entry made from the same object.
@Suite struct AcceptedPushTests {
    let notification = AcceptedNotification(
        apnsId: "9F4B3A2E-0C1D-4E5F-8A7B-6C5D4E3F2A1B", deviceToken: String(repeating: "ab", count: 32),
        topic: "com.example.app", pushType: "background", priority: 5, expiration: nil, collapseId: "news",
        payload: #"{"aps":{"content-available":1}}"#)

    @Test func theAcceptedEventNamesThePushItsEnvironmentAndPayload() {
        let push = AcceptedPush(notification, environment: "sandbox")
        #expect(
            push.attributes(.accepted) == [
                "apnsId": notification.apnsId, "deviceToken": notification.deviceToken, "topic": "com.example.app",
                "pushType": "background", "priority": "5", "environment": "sandbox",
                "payload": #"{"aps":{"content-available":1}}"#,
            ])
    }

    @Test func theDeliveredEventSaysWhetherItWasStored() {
        let push = AcceptedPush(notification, environment: "sandbox")
        var expected: EventAttributes = [
            "apnsId": notification.apnsId, "deviceToken": notification.deviceToken, "priority": "5",
            "stored": "false", "collapseId": "news",
        ]
        #expect(push.attributes(.delivered) == expected)
        expected["stored"] = "true"
        #expect(push.attributes(.deliveredFromStore) == expected)
    }

    @Test func aPushWithoutCollapseIdIsDeliveredWithAnEmptyOne() {
        var plain = notification
        plain.collapseId = nil
        #expect(AcceptedPush(plain, environment: "production").attributes(.delivered)["collapseId"] == "")
    }

    @Test func theLogEntryOfAnAcceptedPushIsReadFromIt() {
        let log = NotificationLog(retention: 10)
        let request = ProviderRequest(
            headers: [(":method", "POST"), (":path", "/3/device/\(notification.deviceToken)")],
            body: Data(notification.payload.utf8))
        let receivedAt = Date(timeIntervalSince1970: 1_800_000_000)
        log.append(
            request, accepted: AcceptedPush(notification, environment: "sandbox"),
            fate: .init(decision: .delivered, deliveredAt: receivedAt), receivedAt: receivedAt)
        let entry = log.entries(deviceToken: notification.deviceToken).first
        #expect(entry?.apnsId == notification.apnsId)
        #expect(entry?.status == 200)
        #expect(entry?.decision == "delivered")
        #expect(entry?.receivedAt == receivedAt)
        #expect(entry?.deliveredAt == receivedAt)
        #expect(entry?.payload == notification.payload)
        #expect(entry?.notification == notification)
    }
}
