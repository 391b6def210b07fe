import Foundation
import HarnessTimeline

/// TCP's retransmissions, as the `loss` toxic and the push channel count them.
public enum Retransmission {
    /// The most times one segment is sent again: Linux's `tcp_retries2` (15).
    public static let most = 15

    /// How long a segment lost `losses` times is late: the first wait, doubled after each loss, each
    /// wait at most a minute (the first one too).
    public static func wait(losses: Int, first: Duration) -> Duration {
        var total = Duration.zero
        var wait = min(first, .seconds(60))
        for _ in 0..<min(losses, most) {
            total += wait
            wait = min(wait * 2, .seconds(60))
        }
        return total
    }
}

extension SplitMix64 {
    /// How many times in a row a segment is lost at a chance of `perMillion` in a million: drawn from
    /// the geometric distribution in one draw, at most ``Retransmission/most``.
    public mutating func losses(perMillion: Int64) -> Int {
        guard perMillion > 0 else { return 0 }
        let chance = Double(min(perMillion, 999_999)) / 1_000_000
        // 1 − unit() is in (0, 1]: its logarithm is finite.
        let count = (log(1 - unit()) / log(chance)).rounded(.down)
        return count >= Double(Retransmission.most) ? Retransmission.most : Int(count)
    }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Uniform in [0, bound); 0 when `bound` is 0.
    public mutating func below(_ bound: UInt64) -> UInt64 { bound == 0 ? 0 : next() % bound }
}
