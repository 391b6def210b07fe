import DeviceProtocol

/// A `_PushStatus` row through its life, as Parse Server's `StatusHandler` moves it: written `pending`
/// (or `scheduled`) before the client is answered, `running` with `count` batches outstanding, each
/// batch adding to `numSent`, `numFailed`, `sentPerType` and `failedPerType`, and `succeeded` once the
/// last batch is in (even when every device failed, as in Parse Server: the counts say so), or `failed`
/// with an `errorMessage` when the push could not be sent at all.
public enum PushStatusRecord {
    public typealias Object = [String: JSONValue]

    /// `_PushStatus.status`: where a push is in its life.
    public enum State: String, Sendable, CaseIterable {
        case pending, scheduled, running, succeeded, failed
    }

    /// The row's `status`, or nil when it holds none of Parse's.
    public static func state(of status: Object) -> State? {
        status["status"]?.stringValue.flatMap(State.init(rawValue:))
    }

    /// Installations per batch, as Parse Server's default `batchSize`.
    public static let batchSize = 100

    public static func initial(id: String, request: PushRequest, body: Object, now: String, pushTime: String?)
        -> Object
    {
        var status: Object = [
            "objectId": .string(id), "createdAt": .string(now), "updatedAt": .string(now),
            "pushTime": .string(pushTime ?? now), "source": "rest",
            "query": .string(JSONValue.object(request.query.source).jsonString()),
            "payload": .string(JSONValue.object(request.data).jsonString()),
            "status": .string((pushTime == nil ? State.pending : .scheduled).rawValue), "numSent": 0, "numFailed": 0,
            "ACL": [:],
        ]
        if let expiration = request.expiration { status["expiry"] = .number(Double(expiration) * 1000) }
        if let interval = body["expiration_interval"] { status["expiration_interval"] = interval }
        return status
    }

    public static func running(_ status: Object, recipients: Int, now: String) -> Object {
        var status = status
        status["updatedAt"] = .string(now)
        guard recipients > 0 else { return completed(status) }
        status["status"] = .string(State.running.rawValue)
        status["count"] = .number(Double((recipients + batchSize - 1) / batchSize))
        return status
    }

    /// One batch's outcomes counted in; the last batch completes the push.
    public static func tracked(_ status: Object, _ outcomes: [PushOutcome], now: String) -> Object {
        var status = status
        status["updatedAt"] = .string(now)
        var sentPerType = status["sentPerType"]?.objectValue ?? [:]
        var failedPerType = status["failedPerType"]?.objectValue ?? [:]
        func count(_ counts: inout [String: JSONValue], _ key: String) {
            counts[key] = .number((counts[key]?.numberValue ?? 0) + 1)
        }
        for outcome in outcomes {
            count(&status, outcome.transmitted ? "numSent" : "numFailed")
            if outcome.transmitted {
                count(&sentPerType, outcome.deviceType)
            } else {
                count(&failedPerType, outcome.deviceType)
            }
        }
        if !sentPerType.isEmpty { status["sentPerType"] = .object(sentPerType) }
        if !failedPerType.isEmpty { status["failedPerType"] = .object(failedPerType) }
        let remaining = (status["count"]?.numberValue ?? 1) - 1
        status["count"] = .number(remaining)
        return remaining <= 0 ? completed(status) : status
    }

    public static func failed(_ status: Object, message: String, now: String) -> Object {
        var status = status
        status["updatedAt"] = .string(now)
        status["status"] = .string(State.failed.rawValue)
        status["errorMessage"] = ["message": .string(message)]
        status["count"] = nil
        return status
    }

    static func completed(_ status: Object) -> Object {
        var status = status
        status["status"] = .string(State.succeeded.rawValue)
        status["count"] = nil
        return status
    }
}

/// What became of a push to one installation: what APNs answered (status, reason, apns-id), or why it
/// was never sent. Kept per device, beyond what Parse Server keeps, as `_PushOutcome` rows.
public struct PushOutcome: Equatable, Sendable {
    public var installation: String
    public var deviceToken: String
    /// The per-type key Parse Server counts by: `ios` for every Apple platform (its APNs adapter reports
    /// them so), else the installation's `pushType` or `deviceType`.
    public var deviceType: String
    public var transmitted: Bool
    public var status: Int?
    public var reason: String?
    public var apnsId: String?
    /// Why there was no answer from APNs (no connection, no sender for the type).
    public var error: String?

    public init(
        installation: String, deviceToken: String, deviceType: String, transmitted: Bool, status: Int? = nil,
        reason: String? = nil, apnsId: String? = nil, error: String? = nil
    ) {
        self.installation = installation
        self.deviceToken = deviceToken
        self.deviceType = deviceType
        self.transmitted = transmitted
        self.status = status
        self.reason = reason
        self.apnsId = apnsId
        self.error = error
    }

    /// The platforms Parse sends through APNs.
    public static let applePlatforms: Set<String> = ["ios", "osx", "tvos", "watchos"]

    /// How Parse's adapter classifies an installation: `pushType`, else `deviceType`.
    public static func platform(of installation: [String: JSONValue]) -> String {
        installation["pushType"]?.stringValue ?? installation["deviceType"]?.stringValue ?? "unknown"
    }

    /// The outcome of an installation no sender handles, with Parse Server's text.
    public static func noSender(_ installation: [String: JSONValue]) -> PushOutcome {
        let platform = platform(of: installation)
        return PushOutcome(
            installation: installation["objectId"]?.stringValue ?? "",
            deviceToken: installation["deviceToken"]?.stringValue ?? "", deviceType: platform, transmitted: false,
            error: "Can not find sender for push type \(platform)")
    }

    /// Whether Parse Server's clean-up forgets this device's token: APNs said `Unregistered` (410) or
    /// `BadDeviceToken`.
    public var tokenIsDead: Bool { reason == "Unregistered" || reason == "BadDeviceToken" }

    public func row(id: String, pushStatusId: String, time: String) -> [String: JSONValue] {
        var row: [String: JSONValue] = [
            "objectId": .string(id), "createdAt": .string(time), "updatedAt": .string(time),
            "pushStatusId": .string(pushStatusId), "installation": .string(installation),
            "deviceToken": .string(deviceToken), "deviceType": .string(deviceType), "transmitted": .bool(transmitted),
        ]
        if let status { row["status"] = .number(Double(status)) }
        if let reason { row["reason"] = .string(reason) }
        if let apnsId { row["apnsId"] = .string(apnsId) }
        if let error { row["error"] = .string(error) }
        return row
    }
}
