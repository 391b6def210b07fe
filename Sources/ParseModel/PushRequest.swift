import DeviceProtocol
import HarnessTimeline

/// `POST /push` as Parse Server's `PushRouter` and `PushController` read it: the audience (`channels` or
/// `where`, never both), the `data`, the badge change it makes to each installation, when it goes out
/// (`push_time`; Parse Server only records that, FakeParse sends it then) and when it expires. Every
/// refusal is Parse's 115 with its text.
public struct PushRequest: Sendable {
    /// The installations aimed at, as the client wrote it (stored in `_PushStatus.query`).
    public var query: ParseQuery
    public var data: [String: JSONValue]
    public var badge: BadgeChange?
    /// When to send, in epoch seconds; nil sends at once.
    public var pushTime: Double?
    /// When APNs may stop trying, in epoch seconds (`apns-expiration`); nil for never.
    public var expiration: Int?

    /// What a push does to each installation's badge before it is sent.
    public enum BadgeChange: Equatable, Sendable {
        case increment(Double)
        case set(Double)
    }

    /// Latest `push_time` taken: a year ahead, beyond which a test is waiting on the wrong thing.
    public static let furthestPushTime = 366.0 * 24 * 3600

    public init(body: [String: JSONValue], now: Double) throws(ParseFailure) {
        switch (body["channels"], body["where"]) {
        case (.some, .some): throw .pushMisconfigured("Channels and query can not be set at the same time.")
        case (nil, nil): throw .pushMisconfigured(#"Sending a push requires either "channels" or a "where" query."#)
        case (.array(let channels)?, nil): query = try ParseQuery(where: ["channels": ["$in": .array(channels)]])
        case (.some(let channels), nil):
            throw .pushMisconfigured("channels must be an array of channel names, not \(channels.jsonString())")
        case (nil, let clause?): query = try ParseQuery(whereJSON: clause)
        }
        switch body["data"] {
        case nil, .null?: data = [:]
        case .object(let object)?: data = object
        case .some(let other): throw .pushMisconfigured("data must be an object, not \(other.jsonString())")
        }
        badge = try Self.badgeChange(data["badge"])
        pushTime = try Self.pushTime(body["push_time"], now: now)
        if let interval = body["expiration_interval"], body["expiration_time"] == nil, let pushTime {
            // An interval counts from when the push goes out.
            expiration = try PushTimes.expiration(["expiration_interval": interval], now: pushTime)
        } else {
            expiration = try PushTimes.expiration(body, now: now)
        }
    }

    /// Rebuilds a push from its `_PushStatus` row (a scheduled push, after a restart).
    public init(status: [String: JSONValue]) throws(ParseFailure) {
        let clause = try ParseJSON.decode(Array((status["query"]?.stringValue ?? "{}").utf8))
        query = try ParseQuery(whereJSON: clause)
        data = try ParseJSON.decode(Array((status["payload"]?.stringValue ?? "{}").utf8)).objectValue ?? [:]
        badge = try Self.badgeChange(data["badge"])
        pushTime = status["pushTime"]?.stringValue.flatMap(ISODate.epochSeconds).map(Double.init)
        expiration = status["expiry"]?.numberValue.map { Int($0 / 1000) }
    }

    /// The installations a push is sent to: the audience, less those without a device token (none,
    /// `null` or empty, which Parse's adapter skips).
    public var recipients: ParseQuery {
        (try? query.adding("deviceToken", ["$gt": ""])) ?? query
    }

    /// `"Increment"` (any case) or `{"__op": "Increment", "amount": n}` adds to each installation's
    /// badge; a number other than 0 sets it; 0 is sent as it is (Parse Server skips it); anything else
    /// is refused.
    static func badgeChange(_ value: JSONValue?) throws(ParseFailure) -> BadgeChange? {
        switch value {
        case nil, .null?, .number(0)?: return nil
        case .string(let text)? where text.lowercased() == "increment": return .increment(1)
        case .number(let number)? where abs(number) <= ObjectChanges.largestIncrement:
            return .set(number.rounded(.down))
        case .object(let object)?:
            if object["__op"] == "Increment", case .number(let amount)? = object["amount"],
                abs(amount) <= ObjectChanges.largestIncrement
            {
                return .increment(amount.rounded(.down))
            }
        default: break
        }
        throw .pushMisconfigured("Invalid value for badge, expected number or 'Increment' or {increment: number}")
    }

    /// `push_time`: epoch seconds or an ISO date with a zone; a date without one means each
    /// installation's local time, which FakeParse does not schedule. A time past is now.
    static func pushTime(_ value: JSONValue?, now: Double) throws(ParseFailure) -> Double? {
        guard let value, value != .null else { return nil }
        if case .string(let text) = value, ISODate.epochSeconds(text) == nil,
            ISODate.epochSeconds(text + "Z") != nil
        {
            throw .pushMisconfigured(
                "push_time \(text) has no time zone: FakeParse does not send at each installation's local time; add Z or an offset"
            )
        }
        guard let seconds = try PushTimes.epochSeconds(value, named: "push_time") else { return nil }
        guard Double(seconds) <= now + furthestPushTime else {
            throw .pushMisconfigured(
                "push_time must be within a year from now, not \(value.stringValue ?? value.jsonString())")
        }
        return Double(seconds) > now ? Double(seconds) : nil
    }
}
