import DeviceProtocol
import DeviceSimulator
import FakeAPNs
import Foundation

/// Connects the simulated device to FakeAPNs's gateway: tokens come from FakeAPNs, and what it accepts
/// for a token is handed to the device as an incoming push.
struct APNsDeviceRegistry: PushRegistry {
    let gateway: DeviceGateway

    func registerDevice(topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void) async throws -> String {
        gateway.register(topic: topic, environment: "sandbox") { notification in
            let payload = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(notification.payload.utf8))) ?? [:]
            await deliver(
                IncomingPush(
                    apnsId: notification.apnsId, topic: notification.topic, pushType: notification.pushType,
                    priority: notification.priority, payload: payload))
        }
    }
}
