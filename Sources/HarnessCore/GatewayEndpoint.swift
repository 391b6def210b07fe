import DeviceProtocol
import FakeAPNs
import Foundation
import PushChannel

/// FakeAPNs's device gateway as the push channel's service side: a notification it delivers becomes
/// an ``IncomingPush`` here, its payload decoded once.
struct GatewayEndpoint: PushServiceEndpoint {
    let gateway: DeviceGateway
    /// The device's name in a scenario with named devices: the gateway's events name it.
    var device: String?

    func register(topic: String, deliver: @escaping @Sendable (IncomingPush) -> Void) -> String {
        gateway.register(topic: topic, environment: "sandbox", device: device) { deliver(IncomingPush($0)) }
    }

    func setOnline(_ token: String, _ online: Bool) { _ = gateway.setOnline(token, online) }

    func unregister(_ token: String) { _ = gateway.unregister(token) }
}

extension IncomingPush {
    /// What the device receives for a notification the gateway accepted. The payload was checked as JSON
    /// when the provider's request was validated; an object is all a device receives.
    init(_ accepted: AcceptedNotification) {
        let payload = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(accepted.payload.utf8))) ?? [:]
        self.init(
            apnsId: accepted.apnsId, topic: accepted.topic, pushType: accepted.pushType, priority: accepted.priority,
            collapseId: accepted.collapseId, payload: payload)
    }
}
