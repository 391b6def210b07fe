import DeviceProtocol
import HarnessTimeline

/// A push's times as Parse Server reads them from `POST /push`: `expiration_time` (epoch seconds or an
/// ISO date) or `expiration_interval` (seconds from now), with Parse's 115 texts; each bounded before
/// any arithmetic touches it.
public enum PushTimes {
    /// The longest `expiration_interval` taken: ten years, far past anything APNs keeps.
    public static let longestExpirationInterval = 315_360_000

    /// The expiry as APNs's `apns-expiration` (epoch seconds), or nil for none.
    public static func expiration(_ body: [String: JSONValue], now: Double) throws(ParseFailure) -> Int? {
        let time = body["expiration_time"]
        let interval = body["expiration_interval"]
        if time != nil, interval != nil {
            throw .pushMisconfigured("Both expiration_time and expiration_interval cannot be set")
        }
        if let interval {
            guard case .number(let seconds) = interval, seconds > 0 else {
                throw .pushMisconfigured("expiration_interval must be a number greater than 0")
            }
            guard seconds <= Double(longestExpirationInterval) else {
                throw .pushMisconfigured(
                    "expiration_interval must be at most \(longestExpirationInterval) seconds (ten years), not \(interval.jsonString())"
                )
            }
            return Int((now + seconds).rounded(.up))
        }
        return try epochSeconds(time, named: "expiration_time")
    }

    /// An epoch-seconds number or an ISO date, held to the years 1970 to 9999.
    static func epochSeconds(_ value: JSONValue?, named name: String) throws(ParseFailure) -> Int? {
        let range = InputBounds.epochSeconds
        switch value {
        case nil: return nil
        case .number(let seconds)?:
            guard seconds.isFinite, seconds.rounded(.down) >= Double(range.lowerBound),
                seconds <= Double(range.upperBound)
            else {
                throw .pushMisconfigured(
                    "\(name) must be epoch seconds from 0 to \(range.upperBound), not \(value!.jsonString())")
            }
            return Int(seconds)
        case .string(let text)?:
            guard let seconds = ISODate.epochSeconds(text) else {
                throw .pushMisconfigured("\(text) is not valid time.")
            }
            guard range.contains(seconds) else {
                throw .pushMisconfigured("\(name) must be from 1970 to 9999, not \(text)")
            }
            return seconds
        case .some(let other):
            throw .pushMisconfigured("\(other.jsonString()) is not valid time.")
        }
    }
}
