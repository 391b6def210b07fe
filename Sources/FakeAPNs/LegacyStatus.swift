/// The status byte of the legacy binary interface's error response (Apple's Table A-4).
enum LegacyStatus: UInt8, Sendable, CaseIterable {
    case noErrors = 0
    case processingError = 1
    case missingDeviceToken = 2
    case missingTopic = 3
    case missingPayload = 4
    case invalidTokenSize = 5
    case invalidTopicSize = 6
    case invalidPayloadSize = 7
    case invalidToken = 8
    /// The server is closing the connection for maintenance; the identifier is the last notification
    /// it took, and everything sent after it must be sent again.
    case shutdown = 10
    /// APNs could not parse what was sent.
    case protocolError = 128
    case unknown = 255

    /// Apple's words for it, for the timeline.
    var name: String {
        switch self {
        case .noErrors: "No errors encountered"
        case .processingError: "Processing error"
        case .missingDeviceToken: "Missing device token"
        case .missingTopic: "Missing topic"
        case .missingPayload: "Missing payload"
        case .invalidTokenSize: "Invalid token size"
        case .invalidTopicSize: "Invalid topic size"
        case .invalidPayloadSize: "Invalid payload size"
        case .invalidToken: "Invalid token"
        case .shutdown: "Shutdown"
        case .protocolError: "Protocol error"
        case .unknown: "None (unknown)"
        }
    }
}

/// The error response: `| 8 | status | identifier |`, the only thing the gateway ever writes, and
/// written just before it closes the connection.
struct LegacyErrorResponse: Equatable, Sendable {
    var status: LegacyStatus
    /// The identifier of the notification it is about (0 when the command has none, or it could not be
    /// read); for `shutdown`, the last notification taken.
    var identifier: UInt32

    var bytes: [UInt8] {
        [
            8, status.rawValue, UInt8(identifier >> 24), UInt8(identifier >> 16 & 0xFF), UInt8(identifier >> 8 & 0xFF),
            UInt8(identifier & 0xFF),
        ]
    }
}

extension LegacyStatus {
    /// What the legacy gateway says where the HTTP/2 API would refuse with `reason`; nil where the binary
    /// interface said nothing: a removed app's token is taken silently, and the feedback service reports
    /// it later.
    static func answering(_ reason: APNsReason) -> LegacyStatus? {
        switch reason.reason {
        case "Unregistered", "ExpiredToken": nil
        case "BadDeviceToken", "DeviceTokenNotForTopic", "TopicDisallowed": .invalidToken
        case "MissingDeviceToken": .missingDeviceToken
        case "MissingTopic": .missingTopic
        // FakeAPNs answers a payload that is not a JSON object as an empty one, on both interfaces.
        case "PayloadEmpty": .missingPayload
        case "PayloadTooLarge": .invalidPayloadSize
        default: .processingError
        }
    }
}
