import Foundation
import HarnessTimeline

/// The provider API's decisions, shared by every connection: validate, record, deliver.
final class ProviderEndpoint: Sendable {
    /// A refusal with the `apns-id` to echo and, for `410`, the unregistration time in milliseconds.
    struct Refusal: Error {
        var status: Int
        var reason: String
        var timestamp: Int64?
        var apnsId: String
    }

    let environment: String
    let gateway: DeviceGateway
    let log: NotificationLog
    private let validator: ProviderRequestValidator
    private let timeline: Timeline

    init(environment: String, validator: ProviderRequestValidator, gateway: DeviceGateway, log: NotificationLog, timeline: Timeline) {
        self.environment = environment
        self.validator = validator
        self.gateway = gateway
        self.log = log
        self.timeline = timeline
    }

    func handle(_ request: ProviderRequest) -> Result<AcceptedNotification, Refusal> {
        switch validator.validate(request) {
        case .success(let notification):
            log.append(.init(notification: notification, status: 200, reason: nil, receivedAt: Date()))
            timeline.publish(
                .apnsAccepted, source: "apns",
                [
                    "apnsId": notification.apnsId, "deviceToken": notification.deviceToken,
                    "topic": notification.topic, "pushType": notification.pushType,
                    "priority": "\(notification.priority)", "payload": notification.payload,
                ])
            gateway.deliver(notification)
            return .success(notification)
        case .failure(let reason):
            let apnsId = request.first("apns-id").flatMap { UUID(uuidString: $0) != nil ? $0 : nil } ?? UUID().uuidString
            let path = request.first(":path") ?? ""
            log.append(.init(rejectedPath: path, apnsId: apnsId, status: reason.status, reason: reason.reason))
            timeline.publish(
                .apnsRejected, source: "apns",
                ["apnsId": apnsId, "path": path, "status": "\(reason.status)", "reason": reason.reason])
            return .failure(Refusal(status: reason.status, reason: reason.reason, apnsId: apnsId))
        }
    }
}
