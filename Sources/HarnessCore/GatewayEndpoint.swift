import DeviceProtocol
import FakeAPNs
import Foundation
import HarnessTimeline
import PushChannel

/// FakeAPNs's device gateway as the push channel's service side: a notification it delivers becomes
/// an ``IncomingPush`` here, its payload decoded once.
struct GatewayEndpoint: PushServiceEndpoint {
    let gateway: DeviceGateway
    /// The device's name in a scenario with named devices: the gateway's events name it.
    var device: String?
    /// The device's timeline, for a notification it cannot read.
    var timeline: Timeline

    func register(topic: String, deliver: @escaping @Sendable (IncomingPush) -> Void) -> String {
        gateway.register(topic: topic, environment: "sandbox", device: device) { [timeline] accepted in
            do {
                deliver(try IncomingPush(accepted))
            } catch {
                timeline.publish(
                    .pushUnreadable, source: "device",
                    ["apnsId": accepted.apnsId, "topic": accepted.topic, "error": "\(error)"])
            }
        }
    }

    func setOnline(_ token: String, _ online: Bool) { _ = gateway.setOnline(token, online) }

    func unregister(_ token: String) { _ = gateway.unregister(token) }
}

extension IncomingPush {
    /// What the device receives for a notification the gateway accepted. The payload was checked as a
    /// JSON object when the provider's request was validated; one that is not throws what decoding said.
    init(_ accepted: AcceptedNotification) throws {
        let payload = try JSONDecoder().decode([String: JSONValue].self, from: Data(accepted.payload.utf8))
        self.init(
            apnsId: accepted.apnsId, topic: accepted.topic, pushType: accepted.pushType, priority: accepted.priority,
            collapseId: accepted.collapseId, payload: payload)
    }
}
