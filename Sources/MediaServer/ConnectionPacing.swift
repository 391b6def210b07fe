import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// One token bucket, remade when its rate or burst changes.
struct PacingState {
    private var bucket: TokenBucket?

    mutating func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant
    {
        if bucket?.rate != Double(rate) || bucket?.burst != Double(burst) {
            bucket = TokenBucket(rate: rate, burst: burst, now: now)
        }
        return bucket!.reserve(bytes, now: now)
    }
}

/// A connection's bucket: it lasts across the responses of a keep-alive connection.
final class ConnectionPacing {
    private var state = PacingState()

    func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        state.reserve(bytes, rate: rate, burst: burst, now: now)
    }
}
