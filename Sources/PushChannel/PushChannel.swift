import DeviceProtocol
import Foundation
import HarnessTimeline
import Recording

/// APNs's persistent connection to one device, as a component of its own: the one path every push
/// takes from the push service (a ``PushServiceEndpoint``) to the device (a ``PushRegistry`` client).
/// Pushes arrive typed, once, and reach the device one at a time in the order the service delivered
/// them, each device on a delivery task the channel owns; ``close()`` ends them. Faults on the channel
/// and its recording land here.
public final class PushChannel: PushRegistry, Sendable {
    private struct Registration {
        var token: String
        var arrivals: AsyncStream<IncomingPush>.Continuation
        var delivery: Task<Void, Never>
    }

    private let endpoint: any PushServiceEndpoint
    private let registrations = LockedState<[Registration]>([])
    /// Records every delivery into a cassette (`apns→device`), when set.
    private let recorder: CassetteRecorder?

    public init(endpoint: any PushServiceEndpoint, recorder: CassetteRecorder? = nil) {
        self.endpoint = endpoint
        self.recorder = recorder
    }

    public func registerDevice(topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void) async throws
        -> String
    {
        // The service hands pushes over on its own threads; the device takes them one at a time, in
        // that order, on the registration's delivery task.
        let (arrivals, arrival) = AsyncStream.makeStream(of: IncomingPush.self)
        let token = endpoint.register(topic: topic) { arrival.yield($0) }
        let recorder = recorder
        let connection = recorder?.connectionID()
        let delivery = Task {
            for await push in arrivals {
                let recording = recorder.map { Self.record(push, token: token, connection: connection, into: $0) }
                await deliver(push)
                recording?.head(status: 200, statusText: "OK", headers: [])
                recording?.finish()
            }
        }
        registrations.withLock { $0.append(Registration(token: token, arrivals: arrival, delivery: delivery)) }
        return token
    }

    public func setReachable(_ reachable: Bool) async {
        for token in registrations.withLock({ $0.map(\.token) }) { endpoint.setOnline(token, reachable) }
    }

    public func unregisterDevice(token: String) async {
        endpoint.unregister(token)
    }

    /// Ends every device's delivery: pushes not yet handed over are dropped, a push being handed over
    /// finishes first.
    public func close() async {
        let all = registrations.withLock { registrations in
            defer { registrations.removeAll() }
            return registrations
        }
        for registration in all {
            registration.arrivals.finish()
            registration.delivery.cancel()
        }
        for registration in all { await registration.delivery.value }
    }
}

extension PushChannel {
    /// A delivery as an exchange: the notification as APNs hands it to the device (its headers and
    /// payload), answered when the device has taken it.
    fileprivate static func record(
        _ push: IncomingPush, token: String, connection: String?, into recorder: CassetteRecorder
    ) -> ExchangeRecording {
        var headers = [
            (name: "apns-id", value: push.apnsId), (name: "apns-topic", value: push.topic),
            (name: "apns-push-type", value: push.pushType), (name: "apns-priority", value: "\(push.priority)"),
        ]
        if let collapseId = push.collapseId { headers.append((name: "apns-collapse-id", value: collapseId)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = (try? encoder.encode(push.payload)).map { String(decoding: $0, as: UTF8.self) }
        return recorder.exchange(
            service: "device", link: "apns→device", connection: connection, method: "POST",
            url: "apns://device/3/device/\(token)", httpVersion: "HTTP/2", headers: headers, requestBody: payload,
            requestMimeType: "application/json")
    }
}
