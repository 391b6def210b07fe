import HarnessTimeline

/// One token bucket, remade when its rate or burst changes.
struct PacingState {
    private var bucket: TokenBucket?

    mutating func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant
    {
        var current = bucket ?? TokenBucket(rate: rate, burst: burst, now: now)
        if current.rate != Double(rate) || current.burst != Double(burst) {
            current = TokenBucket(rate: rate, burst: burst, now: now)
        }
        defer { bucket = current }
        return current.reserve(bytes, now: now)
    }
}

/// A connection's bucket: it lasts across the responses of a keep-alive connection.
final class ConnectionPacing {
    private var state = PacingState()

    func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        state.reserve(bytes, rate: rate, burst: burst, now: now)
    }
}

/// When each write of one response may go: the connection's bucket and the server's, at the rates in
/// force when the response started, and how big a write is at those rates.
struct ResponsePacer {
    let settings: MediaServerSettings
    let connection: ConnectionPacing
    let server: LockedState<PacingState>
    let chunkSize: Int
    private let burst: Int

    init(settings: MediaServerSettings, connection: ConnectionPacing, server: LockedState<PacingState>) {
        self.settings = settings
        self.connection = connection
        self.server = server
        let slowest = [settings.throttleBytesPerSecond, settings.serverBytesPerSecond].compactMap { $0 }.min()
        chunkSize = MediaServerSettings.chunkSize(rate: slowest)
        burst = settings.burstBytes ?? chunkSize
    }

    /// Takes `bytes` from the buckets; when they may go, if that is later than now.
    func due(_ bytes: Int) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        var due = now
        if let rate = settings.throttleBytesPerSecond {
            due = max(due, connection.reserve(bytes, rate: rate, burst: burst, now: now))
        }
        if let rate = settings.serverBytesPerSecond {
            due = max(due, server.withLock { $0.reserve(bytes, rate: rate, burst: burst, now: now) })
        }
        return due > now ? due : nil
    }
}
