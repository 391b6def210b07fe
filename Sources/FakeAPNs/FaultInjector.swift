import Foundation
import HarnessTimeline

/// Failures and rate limits injected per device token through the control API: the way to make
/// FakeAPNs answer `429`, `500`, `503` or `410`, or answer slowly, on demand.
public final class FaultInjector: Sendable {
    /// A failure to give the next requests for one token.
    public struct Failure: Codable, Sendable, Equatable {
        /// The HTTP status; 200 with a delay makes a slow success.
        public var status: Int
        /// Apple's reason string; defaults to the usual one for the status.
        public var reason: String?
        /// How long to wait before answering.
        public var delayMilliseconds: Int?
        /// How many requests it applies to; nil for every request until cleared.
        public var count: Int?

        public init(status: Int, reason: String? = nil, delayMilliseconds: Int? = nil, count: Int? = nil) {
            self.status = status
            self.reason = reason
            self.delayMilliseconds = delayMilliseconds
            self.count = count
        }
    }

    /// A token bucket per device token: sustained rate and burst.
    public struct RateLimit: Codable, Sendable, Equatable {
        public var requestsPerSecond: Double
        public var burst: Int?

        public init(requestsPerSecond: Double, burst: Int? = nil) {
            self.requestsPerSecond = requestsPerSecond
            self.burst = burst
        }

        /// How many requests the bucket holds: `burst`, or a second's worth (at least one). Only for
        /// a limit that passed ``FaultInjector/problem(with:)-swift.type.method``.
        var capacity: Double { Double(burst ?? max(1, Int(requestsPerSecond))) }
    }

    /// What to do with one request.
    struct Verdict {
        var refusal: APNsReason?
        var delay: Duration
    }

    private struct State {
        var failures: [String: Failure] = [:]
        var limits: [String: (limit: RateLimit, tokens: Double, updated: ContinuousClock.Instant)] = [:]
    }

    private let state = LockedState(State())

    public init() {}

    /// Checks that `failure` names a status and reason APNs could give; returns a message if not.
    public static func problem(with failure: Failure) -> String? {
        guard [200, 400, 403, 404, 405, 410, 413, 429, 500, 503].contains(failure.status) else {
            return
                "status \(failure.status) is not one APNs answers with (200, 400, 403, 404, 405, 410, 413, 429, 500, 503)"
        }
        if let reason = failure.reason, APNsReason.documented[reason] == nil {
            return
                "'\(reason)' is not one of Apple's reasons: \(APNsReason.documented.keys.sorted().joined(separator: ", "))"
        }
        if let count = failure.count, let problem = InputBounds.problem("count", count, in: InputBounds.count) {
            return problem
        }
        if let delay = failure.delayMilliseconds,
            let problem = InputBounds.problem("delayMilliseconds", delay, in: InputBounds.milliseconds, unit: " ms")
        {
            return problem
        }
        return nil
    }

    /// Checks that `limit` can be kept: a rate and a burst in bounds; returns a message if not.
    public static func problem(with limit: RateLimit) -> String? {
        if let problem = InputBounds.problem(
            "requestsPerSecond", limit.requestsPerSecond, in: InputBounds.requestsPerSecond)
        {
            return problem + " (null removes the limit)"
        }
        if let burst = limit.burst, let problem = InputBounds.problem("burst", burst, in: InputBounds.count) {
            return problem
        }
        return nil
    }

    public func inject(_ failure: Failure, for token: String) {
        state.withLock { $0.failures[token.lowercased()] = failure }
    }

    public func limit(_ token: String, to limit: RateLimit?) {
        state.withLock { state in
            let token = token.lowercased()
            if let limit {
                state.limits[token] = (limit, limit.capacity, .now)
            } else {
                state.limits[token] = nil
            }
        }
    }

    public func reset() { state.withLock { $0 = State() } }

    /// Consumes one request's worth of the injected failure and of the rate limit for `token`, at `now`
    /// (nil: the clock is read only when a rate limit needs it).
    func verdict(for token: String, now: ContinuousClock.Instant? = nil) -> Verdict {
        state.withLock { state in
            // Most runs inject nothing: no token to look up, and no clock to read.
            if state.limits.isEmpty, state.failures.isEmpty { return Verdict(refusal: nil, delay: .zero) }
            if var entry = state.limits[token] {
                let now = now ?? .now
                let elapsed = entry.updated.duration(to: now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                entry.tokens = min(entry.limit.capacity, entry.tokens + seconds * entry.limit.requestsPerSecond)
                entry.updated = now
                let allowed = entry.tokens >= 1
                if allowed { entry.tokens -= 1 }
                state.limits[token] = entry
                if !allowed { return Verdict(refusal: .tooManyRequests, delay: .zero) }
            }
            guard var failure = state.failures[token] else { return Verdict(refusal: nil, delay: .zero) }
            if let count = failure.count {
                failure.count = count - 1
                state.failures[token] = count > 1 ? failure : nil
            }
            let delay = Duration.milliseconds(failure.delayMilliseconds ?? 0)
            guard failure.status != 200 else { return Verdict(refusal: nil, delay: delay) }
            var reason = failure.reason.flatMap { APNsReason.documented[$0] } ?? Self.usualReason(for: failure.status)
            reason.status = failure.status
            if reason.status == 410 { reason.timestamp = Int64(Date().timeIntervalSince1970 * 1000) }
            return Verdict(refusal: reason, delay: delay)
        }
    }

    private static func usualReason(for status: Int) -> APNsReason {
        switch status {
        case 410: .unregistered(at: 0)
        case 429: .tooManyRequests
        case 500: .internalServerError
        case 503: .serviceUnavailable
        case 403: .forbidden
        case 413: .payloadTooLarge
        case 404: .badPath
        case 405: .methodNotAllowed
        default: .badDeviceToken
        }
    }
}
