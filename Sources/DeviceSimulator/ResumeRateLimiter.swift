/// nsurlsessiond's resume rate limiter (docs/ios-rules.md U9): each time it resumes or relaunches an app in the
/// background for a session it doubles a per-app delay (60 s, then 120, 240, …); tasks the app creates
/// in the background do not start before that delay has passed since the wake. Bringing the app to
/// the foreground resets it, and so does a delay that passes without a wake. Times are policy time.
public struct ResumeRateLimiter: Sendable, Equatable {
    /// The first delay; 0 turns the limiter off.
    public var initialDelay: Duration
    private var delay: Duration = .zero
    private var lastWake: Duration?

    public init(initialDelay: Duration = .seconds(60)) { self.initialDelay = initialDelay }

    /// nsurlsessiond woke the app at `now`.
    public mutating func wake(at now: Duration) {
        guard initialDelay > .zero else { return }
        if let lastWake, now - lastWake > delay { delay = .zero }  // it passed without a wake
        // Doubling stops at a day (or the first delay, if longer): a storm of wakes cannot grow it forever.
        delay = delay == .zero ? initialDelay : min(delay * 2, max(initialDelay, .seconds(86_400)))
        lastWake = now
    }

    /// The user brought the app to the foreground.
    public mutating func reset() {
        delay = .zero
        lastWake = nil
    }

    /// When a task created in the background at `now` may start; nil when at once.
    public func startOfTaskCreated(at now: Duration) -> Duration? {
        guard let lastWake, delay > .zero, now < lastWake + delay else { return nil }
        return lastWake + delay
    }

    /// The delay in force after the last wake.
    public var currentDelay: Duration { delay }
}
