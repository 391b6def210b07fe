import DeviceProtocol
import HarnessTimeline

/// One notification for APNs, as Parse's APNs adapter builds it from a push's `data` and an
/// installation: `aps` from the keys Apple defines, every other key beside it, the topic from the
/// installation's `appIdentifier`, and the headers from `push_type`, `priority` and `collapse_id`.
public struct ApplePush: Equatable, Sendable {
    public var deviceToken: String
    public var topic: String
    public var pushType: String
    /// `apns-priority` as sent: FakeAPNs (or Apple) judges it.
    public var priority: String
    public var expiration: Int?
    public var collapseId: String?
    public var payload: JSONValue

    /// The installation's badge as a push sends it: a whole number in the range iOS shows, or nil when
    /// the installation has no number there.
    public static func badge(_ value: JSONValue?) -> Int? {
        guard case .number(let number)? = value, number.isFinite else { return nil }
        let range = InputBounds.badge
        return Int(min(max(number.rounded(.down), Double(range.lowerBound)), Double(range.upperBound)))
    }
}

/// A push's `data` read once, then made into each installation's ``ApplePush``.
public struct ApplePushTemplate: Sendable {
    var aps: [String: JSONValue] = [:]
    var custom: [String: JSONValue] = [:]
    public private(set) var pushType = "alert"
    public private(set) var priority = "10"
    public private(set) var collapseId: String?
    /// Whether the badge sent is each installation's own (after the push's badge change).
    let badgePerInstallation: Bool

    /// The `data` keys that become `aps` keys under Apple's names.
    static let apsKeys: [String: String] = [
        "alert": "alert", "sound": "sound", "category": "category", "threadId": "thread-id",
        "interruptionLevel": "interruption-level", "targetContentIdentifier": "target-content-id",
    ]

    public init(data: [String: JSONValue], badgePerInstallation: Bool) {
        self.badgePerInstallation = badgePerInstallation
        for key in data.keys.sorted() {
            let value = data[key]!
            switch key {
            case "badge": if case .number = value { aps["badge"] = value }
            case "content-available", "mutable-content": if value == 1 { aps[key] = 1 }
            case "title": break
            case "push_type": pushType = value.stringValue ?? pushType
            case "priority":
                switch value {
                case .number, .string: priority = value.stringValue ?? value.jsonString()
                default: break
                }
            case "collapse_id", "collapseId": collapseId = value.stringValue
            case "aps": if case .object(let raw) = value { aps.merge(raw) { _, new in new } }
            default:
                if let apsKey = Self.apsKeys[key] { aps[apsKey] = value } else { custom[key] = value }
            }
        }
        if case .string(let title)? = data["title"] {
            if case .string(let body)? = aps["alert"] {
                aps["alert"] = ["title": .string(title), "body": .string(body)]
            } else {
                var alert = aps["alert"]?.objectValue ?? [:]
                alert["title"] = .string(title)
                aps["alert"] = .object(alert)
            }
        }
    }

    /// The notification for one installation; nil when it has no device token.
    public func push(for installation: [String: JSONValue], expiration: Int?) -> ApplePush? {
        guard let token = installation["deviceToken"]?.stringValue else { return nil }
        var aps = aps
        if badgePerInstallation { aps["badge"] = ApplePush.badge(installation["badge"]).map { .number(Double($0)) } }
        if case .number(let number)? = aps["badge"] {
            aps["badge"] = ApplePush.badge(.number(number)).map { .number(Double($0)) }
        }
        var payload = custom
        payload["aps"] = .object(aps)
        return ApplePush(
            deviceToken: token, topic: installation["appIdentifier"]?.stringValue ?? "", pushType: pushType,
            priority: priority, expiration: expiration, collapseId: collapseId, payload: .object(payload))
    }
}
