/// A reason APNs gives for refusing a request, with the HTTP status Apple pairs it with.
public struct APNsReason: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: String
    /// For `410`: when APNs learned the token was no longer valid, in milliseconds since 1970.
    public var timestamp: Int64?

    public init(status: Int, reason: String, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }

    public var description: String { "\(status) \(reason)" }

    /// The response body Apple sends: `{"reason": …}`, with `timestamp` for `410`.
    public var json: String {
        if let timestamp { return #"{"reason":"\#(reason)","timestamp":\#(timestamp)}"# }
        return #"{"reason":"\#(reason)"}"#
    }

    public static let badCollapseId = APNsReason(status: 400, reason: "BadCollapseId")
    public static let badDeviceToken = APNsReason(status: 400, reason: "BadDeviceToken")
    public static let badExpirationDate = APNsReason(status: 400, reason: "BadExpirationDate")
    public static let badMessageId = APNsReason(status: 400, reason: "BadMessageId")
    public static let badPriority = APNsReason(status: 400, reason: "BadPriority")
    public static let badTopic = APNsReason(status: 400, reason: "BadTopic")
    public static let deviceTokenNotForTopic = APNsReason(status: 400, reason: "DeviceTokenNotForTopic")
    public static let duplicateHeaders = APNsReason(status: 400, reason: "DuplicateHeaders")
    public static let idleTimeout = APNsReason(status: 400, reason: "IdleTimeout")
    public static let invalidPushType = APNsReason(status: 400, reason: "InvalidPushType")
    public static let missingDeviceToken = APNsReason(status: 400, reason: "MissingDeviceToken")
    public static let missingTopic = APNsReason(status: 400, reason: "MissingTopic")
    public static let payloadEmpty = APNsReason(status: 400, reason: "PayloadEmpty")
    public static let topicDisallowed = APNsReason(status: 400, reason: "TopicDisallowed")
    public static let badCertificate = APNsReason(status: 403, reason: "BadCertificate")
    public static let badCertificateEnvironment = APNsReason(status: 403, reason: "BadCertificateEnvironment")
    public static let expiredProviderToken = APNsReason(status: 403, reason: "ExpiredProviderToken")
    public static let forbidden = APNsReason(status: 403, reason: "Forbidden")
    public static let invalidProviderToken = APNsReason(status: 403, reason: "InvalidProviderToken")
    public static let missingProviderToken = APNsReason(status: 403, reason: "MissingProviderToken")
    public static let unrelatedKeyIdInToken = APNsReason(status: 403, reason: "UnrelatedKeyIdInToken")
    public static let badEnvironmentKeyIdInToken = APNsReason(status: 403, reason: "BadEnvironmentKeyIdInToken")
    public static let badPath = APNsReason(status: 404, reason: "BadPath")
    public static let methodNotAllowed = APNsReason(status: 405, reason: "MethodNotAllowed")
    public static func expiredToken(at milliseconds: Int64) -> APNsReason {
        APNsReason(status: 410, reason: "ExpiredToken", timestamp: milliseconds)
    }
    public static func unregistered(at milliseconds: Int64) -> APNsReason {
        APNsReason(status: 410, reason: "Unregistered", timestamp: milliseconds)
    }
    public static let payloadTooLarge = APNsReason(status: 413, reason: "PayloadTooLarge")
    public static let tooManyProviderTokenUpdates = APNsReason(status: 429, reason: "TooManyProviderTokenUpdates")
    public static let tooManyRequests = APNsReason(status: 429, reason: "TooManyRequests")
    public static let internalServerError = APNsReason(status: 500, reason: "InternalServerError")
    public static let serviceUnavailable = APNsReason(status: 503, reason: "ServiceUnavailable")
    public static let shutdown = APNsReason(status: 503, reason: "Shutdown")

    /// Every reason Apple documents, by name, for the control API's failure injection.
    public static let documented: [String: APNsReason] = Dictionary(
        uniqueKeysWithValues: [
            badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic,
            deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken, missingTopic,
            payloadEmpty, topicDisallowed, badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden,
            invalidProviderToken, missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken, badPath,
            methodNotAllowed, expiredToken(at: 0), unregistered(at: 0), payloadTooLarge, tooManyProviderTokenUpdates,
            tooManyRequests, internalServerError, serviceUnavailable, shutdown,
        ].map { ($0.reason, $0) })
}
