import Foundation

/// Every timer of the device gateway as a value: when each device and topic's stored notification
/// expires, and when each one's coalescing window ends. The gateway's one timer loop (``DeviceGateway/run()``)
/// sleeps until ``earliest`` and takes what is due; a deadline set sooner than the loop sleeps for wakes it.
struct GatewayTimers: Equatable {
    enum Purpose: Hashable {
        /// The stored notification expires (`apns-expiration`, or the default storage time).
        case expiry
        /// The notifications held for coalescing go out.
        case coalescing
    }

    struct Key: Hashable {
        var token: String
        var topic: String
        var purpose: Purpose
    }

    private(set) var deadlines: [Key: Date] = [:]
    /// What the loop sleeps until, as it last said (nil: until woken).
    private(set) var sleepingUntil: Date?

    var earliest: Date? { deadlines.values.min() }

    /// Sets `key`'s deadline; returns whether the loop must wake for it (it sleeps past it).
    mutating func set(_ key: Key, at date: Date) -> Bool {
        deadlines[key] = date
        guard let sleepingUntil else { return true }
        return date < sleepingUntil
    }

    /// Every deadline of `token` for `purpose`.
    mutating func cancelAll(token: String, purpose: Purpose) {
        deadlines = deadlines.filter { $0.key.token != token || $0.key.purpose != purpose }
    }

    mutating func removeAll() { deadlines.removeAll() }

    /// The loop is going to sleep: until the earliest deadline, which it is told.
    mutating func sleeping() -> Date? {
        sleepingUntil = earliest
        return sleepingUntil
    }

    /// The deadlines due at `now`, taken, soonest first (ties by token, topic and purpose).
    mutating func takeDue(at now: Date) -> [Key] {
        let due = deadlines.filter { $0.value <= now }.sorted {
            ($0.value, $0.key.token, $0.key.topic, $0.key.purpose == .expiry ? 0 : 1)
                < ($1.value, $1.key.token, $1.key.topic, $1.key.purpose == .expiry ? 0 : 1)
        }
        for (key, _) in due { deadlines[key] = nil }
        return due.map(\.key)
    }
}
