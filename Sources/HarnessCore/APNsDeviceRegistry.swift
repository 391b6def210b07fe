import DeviceProtocol
import DeviceSimulator
import FakeAPNs
import Foundation
import HarnessTimeline

/// Connects the simulated device to FakeAPNs's gateway: tokens come from FakeAPNs, what it accepts for
/// a token is handed to the device as an incoming push, and the device's network decides whether
/// FakeAPNs sees it online.
final class APNsDeviceRegistry: PushRegistry {
    let gateway: DeviceGateway
    private let tokens = LockedState<[String]>([])

    init(gateway: DeviceGateway) { self.gateway = gateway }

    func registerDevice(topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void) async throws -> String
    {
        // The gateway hands notifications over on its own threads; the device takes them one at a time,
        // in that order, on a task of its own.
        let (arrivals, arrival) = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = gateway.register(topic: topic, environment: "sandbox") { arrival.yield($0) }
        // The stream ends, and the task with it, when the gateway lets go of the device.
        Task {
            for await notification in arrivals {
                let payload =
                    (try? JSONDecoder().decode([String: JSONValue].self, from: Data(notification.payload.utf8))) ?? [:]
                await deliver(
                    IncomingPush(
                        apnsId: notification.apnsId, topic: notification.topic, pushType: notification.pushType,
                        priority: notification.priority, collapseId: notification.collapseId, payload: payload))
            }
        }
        tokens.withLock { $0.append(token) }
        return token
    }

    func unregisterDevice(token: String) async {
        gateway.unregister(token)
    }

    func setReachable(_ reachable: Bool) async {
        for token in tokens.withLock({ $0 }) { gateway.setOnline(token, reachable) }
    }
}
