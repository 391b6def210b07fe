import DeviceProtocol

/// A notification that APNs delivered to this device.
public struct IncomingPush: Sendable, Equatable {
    public var apnsId: String
    public var topic: String
    public var pushType: String
    public var priority: Int
    public var payload: [String: JSONValue]

    public init(apnsId: String, topic: String, pushType: String, priority: Int, payload: [String: JSONValue]) {
        self.apnsId = apnsId
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.payload = payload
    }

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
}
