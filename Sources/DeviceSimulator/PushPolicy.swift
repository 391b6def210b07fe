/// What decides, beyond the app's state, whether a background push may wake an app (docs/ios-rules.md P10, P11):
/// the user's settings and the system's budget. Permissive by default, as a debug session is.
public struct PushPolicy: Sendable, Equatable {
    /// The Background App Refresh switch; off, background pushes do not wake the app.
    public var backgroundAppRefresh = true
    /// Low Power Mode turns Background App Refresh off.
    public var lowPowerMode = false
    /// Background wakes per app in any hour; nil for no limit. Apple's guideline is two or three.
    public var wakesPerHour: Int?
    /// Background wakes per app per day; the budget resets 24 h after the first wake it counted. nil
    /// for no limit.
    public var wakesPerDay: Int?

    public init() {}

    /// Why a background wake is not allowed by the settings; nil when they allow it.
    public var suppression: String? {
        if lowPowerMode { return "Low Power Mode is on (it turns Background App Refresh off)" }
        if !backgroundAppRefresh { return "Background App Refresh is off" }
        return nil
    }
}

/// An app's background-push budget under a ``PushPolicy``: when it allows the next wake. Times are
/// offsets on the device's policy clock, so that the rule is testable without waiting.
public struct WakeBudget: Sendable, Equatable {
    public var policy: PushPolicy
    /// The wakes counted in the last hour, oldest first.
    private var recent: [Duration] = []
    /// The start of the current day's budget and the wakes counted in it.
    private var day: (start: Duration, wakes: Int)?

    public init(policy: PushPolicy) { self.policy = policy }

    public enum Verdict: Equatable, Sendable {
        case allowed
        /// Not now: `reason`, and when the budget allows a wake again (nil: only the settings can change it).
        case held(reason: String, until: Duration?)
    }

    public func verdict(at now: Duration) -> Verdict {
        if let suppression = policy.suppression { return .held(reason: suppression, until: nil) }
        if policy.wakesPerDay == 0 {
            return .held(reason: "the app's daily budget allows no background wakes", until: nil)
        }
        if let perDay = policy.wakesPerDay, let day, now < day.start + .seconds(86_400), day.wakes >= perDay {
            return .held(
                reason: "the app's daily budget of \(perDay) background wakes is spent; it resets 24 h after it began",
                until: day.start + .seconds(86_400))
        }
        if let perHour = policy.wakesPerHour {
            let inLastHour = recent.filter { $0 > now - .seconds(3600) }
            if perHour == 0 {
                return .held(reason: "0 background wakes in the last hour is the most the budget allows", until: nil)
            }
            if inLastHour.count >= perHour {
                return .held(
                    reason: "\(perHour) background wakes in the last hour is the most the budget allows",
                    until: inLastHour[inLastHour.count - perHour] + .seconds(3600))
            }
        }
        return .allowed
    }

    /// Counts a wake at `now`.
    public mutating func record(at now: Duration) {
        recent = recent.filter { $0 > now - .seconds(3600) } + [now]
        if let current = day, now < current.start + .seconds(86_400) {
            day = (current.start, current.wakes + 1)
        } else {
            day = (now, 1)
        }
    }

    public static func == (left: WakeBudget, right: WakeBudget) -> Bool {
        left.policy == right.policy && left.recent == right.recent && left.day?.start == right.day?.start
            && left.day?.wakes == right.day?.wakes
    }
}
