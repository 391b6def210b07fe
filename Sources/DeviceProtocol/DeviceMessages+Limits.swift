/// Bounds on numbers apps send, checked and turned into durations before the device computes with
/// them: each of these once trapped the whole harness (docs/limits.md).
public enum DeviceLimits {
    /// The longest interval or delay an app may ask for, in seconds: ten years.
    public static let longestInterval: Double = 315_360_000
}

extension BackgroundFetchIntervalParams {
    /// The interval as the device keeps it: nil for never (null, or UIKit's
    /// `UIApplicationBackgroundFetchIntervalNever`, the largest Double). Longer than ten years, negative
    /// or not a number is refused.
    public func interval() throws -> Duration? {
        guard let seconds, seconds.isNaN || seconds < .greatestFiniteMagnitude else { return nil }
        guard seconds >= 0, seconds <= DeviceLimits.longestInterval else {
            throw RPCError.invalidParams(
                "seconds must be 0 (minimum) to \(Int(DeviceLimits.longestInterval)) (ten years), or null (never), not \(seconds)"
            )
        }
        return .seconds(seconds)
    }
}

extension NotificationRequestParams {
    /// How long until the notification fires: nil for now. More than 0 and at most ten years.
    public func delay() throws -> Duration? {
        guard let timeInterval else { return nil }
        guard timeInterval > 0, timeInterval <= DeviceLimits.longestInterval else {
            throw RPCError.invalidParams(
                "timeInterval must be more than 0 and at most \(Int(DeviceLimits.longestInterval)) seconds (a nil trigger delivers now), not \(timeInterval)"
            )
        }
        return .seconds(timeInterval)
    }
}
