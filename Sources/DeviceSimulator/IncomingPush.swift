import DeviceProtocol

/// A notification that APNs delivered to this device.
public struct IncomingPush: Sendable, Equatable {
    public var apnsId: String
    public var topic: String
    public var pushType: String
    public var priority: Int
    /// `apns-collapse-id`: becomes the identifier of the notification shown, replacing one with the same.
    public var collapseId: String?
    public var payload: [String: JSONValue]

    public init(
        apnsId: String, topic: String, pushType: String, priority: Int, collapseId: String? = nil,
        payload: [String: JSONValue]
    ) {
        self.apnsId = apnsId
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.collapseId = collapseId
        self.payload = payload
    }

    /// `aps.alert`: what the system shows for a visible push.
    public var alert: JSONValue? { payload["aps"]?["alert"] }

    /// `aps.content-available == 1`, the only value iOS treats as a background update.
    public var isContentAvailable: Bool { payload["aps"]?["content-available"]?.numberValue == 1 }
}

/// Where the device gets its APNs token and its pushes: the seam to the push service (FakeAPNs's
/// device gateway in a harness run).
public protocol PushRegistry: Sendable {
    /// Registers the device for `topic` and returns the token; pushes accepted for it arrive at `deliver`.
    func registerDevice(
        topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void
    ) async throws -> String

    /// The device's network came or went: while unreachable, the push service stores what it accepts.
    func setReachable(_ reachable: Bool) async

    /// The app was deleted: the push service answers its token with `410 Unregistered` from now on.
    func unregisterDevice(token: String) async
}
