/// A reason APNs gives for refusing a request, with the HTTP status Apple pairs it with.
public struct APNsReason: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status) \(reason)" }

    public static let badDeviceToken = APNsReason(status: 400, reason: "BadDeviceToken")
    public static let badExpirationDate = APNsReason(status: 400, reason: "BadExpirationDate")
    public static let badMessageId = APNsReason(status: 400, reason: "BadMessageId")
    public static let badPriority = APNsReason(status: 400, reason: "BadPriority")
    public static let badTopic = APNsReason(status: 400, reason: "BadTopic")
    public static let deviceTokenNotForTopic = APNsReason(status: 400, reason: "DeviceTokenNotForTopic")
    public static let invalidPushType = APNsReason(status: 400, reason: "InvalidPushType")
    public static let missingDeviceToken = APNsReason(status: 400, reason: "MissingDeviceToken")
    public static let missingTopic = APNsReason(status: 400, reason: "MissingTopic")
    public static let payloadEmpty = APNsReason(status: 400, reason: "PayloadEmpty")
    public static let expiredProviderToken = APNsReason(status: 403, reason: "ExpiredProviderToken")
    public static let invalidProviderToken = APNsReason(status: 403, reason: "InvalidProviderToken")
    public static let missingProviderToken = APNsReason(status: 403, reason: "MissingProviderToken")
    public static let badPath = APNsReason(status: 404, reason: "BadPath")
    public static let methodNotAllowed = APNsReason(status: 405, reason: "MethodNotAllowed")
    public static let payloadTooLarge = APNsReason(status: 413, reason: "PayloadTooLarge")
}
