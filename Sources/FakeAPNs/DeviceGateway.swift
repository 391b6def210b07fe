import Foundation
import HarnessTimeline

/// The device side of FakeAPNs: tokens handed to simulated devices, and delivery of accepted
/// notifications to them. Each registered device receives through its `deliver` closure.
public final class DeviceGateway: Sendable {
    public typealias Deliver = @Sendable (AcceptedNotification) async -> Void

    struct Device {
        var topic: String
        var environment: String
        var deliver: Deliver?
    }

    private let devices = LockedState<[String: Device]>([:])
    private let timeline: Timeline

    init(timeline: Timeline) { self.timeline = timeline }

    /// Registers a device for `topic` and returns its new token (32 random bytes, lowercase hex).
    public func register(topic: String, environment: String = "sandbox", deliver: Deliver? = nil) -> String {
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        devices.withLock { $0[token] = Device(topic: topic, environment: environment, deliver: deliver) }
        timeline.publish(
            .apnsDeviceRegistered, source: "apns", ["deviceToken": token, "topic": topic, "environment": environment])
        return token
    }

    public func topic(of token: String) -> String? { devices.withLock { $0[token]?.topic } }

    /// Hands an accepted notification to its device, or records that no device is listening.
    func deliver(_ notification: AcceptedNotification) {
        guard let deliver = devices.withLock({ $0[notification.deviceToken]?.deliver }) else {
            timeline.publish(
                .apnsStored, source: "apns",
                ["apnsId": notification.apnsId, "deviceToken": notification.deviceToken, "reason": "no device connected"])
            return
        }
        timeline.publish(
            .apnsDelivered, source: "apns", ["apnsId": notification.apnsId, "deviceToken": notification.deviceToken])
        Task { await deliver(notification) }
    }
}
