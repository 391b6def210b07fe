/// A token bucket: `rate` bytes per second flow in, at most `burst` are held. Sending takes tokens; a
/// send that finds too few goes into debt and is told when the debt is paid, so that waits never
/// accumulate drift and the long-run rate is exactly `rate` (a send is never refused, only delayed).
struct TokenBucket: Sendable {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    init(rate: Int, burst: Int, now: ContinuousClock.Instant) {
        self.rate = Double(rate)
        self.burst = Double(max(1, burst))
        self.tokens = Double(max(1, burst))
        self.updated = now
    }

    /// Takes `bytes` tokens and returns when those bytes may go.
    mutating func reserve(_ bytes: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        if now > updated {
            let elapsed = updated.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + seconds * rate)
            updated = now
        }
        tokens -= Double(bytes)
        guard tokens < 0 else { return now }
        return updated.advanced(by: .seconds(-tokens / rate))
    }
}
