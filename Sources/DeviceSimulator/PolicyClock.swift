import HarnessTimeline

/// The device's one clock for policy timers: the push budget's 30 s, the suspension delay after Home,
/// the session handler's watchdog, the wake budget's hours and days, nsurlsessiond's retry waits.
///
/// A scenario can scale it: at `timeScale` 0.1 a policy second lasts a tenth of a real one, so the
/// 30 s budget runs out after 3 s and tests stay fast. Network transfers, launch timeouts and the
/// media server's rates stay real. Events name policy durations, as the rules are written in them.
public struct PolicyClock: Sendable {
    /// Real seconds per policy second; 1 is real time.
    public let timeScale: Double
    private let start: ContinuousClock.Instant

    public init(timeScale: Double = 1) {
        self.init(timeScale: timeScale, startedAt: .now)
    }

    /// A clock that started at `start` (tests read a clock that has run for a known time).
    init(timeScale: Double, startedAt start: ContinuousClock.Instant) {
        precondition(timeScale > 0, "a time scale must be positive")
        self.timeScale = timeScale
        self.start = start
    }

    /// Policy time since the clock started.
    public var now: Duration { start.duration(to: .now) / timeScale }

    /// How long `policy` lasts in real time.
    public func real(_ policy: Duration) -> Duration { policy * timeScale }

    /// Sleeps for `policy` on this clock.
    public func sleep(for policy: Duration) async throws {
        try await Task.sleep(for: real(policy))
    }

    /// Waits `policy` on this clock, or less when the task is cancelled (see `pause(for:)`).
    public func pause(for policy: Duration) async {
        await HarnessTimeline.pause(for: real(policy))
    }
}
