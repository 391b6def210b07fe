import DeviceProtocol

/// A notification the push service delivers to a device: typed once, where it enters the channel.
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
