import Foundation
import Testing

@testable import MediaServer

@Suite struct TokenBucketTests {
    let start = ContinuousClock.now

    func seconds(_ instant: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: instant)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func theBurstGoesAtOnceThenTheRateHolds() {
        var bucket = TokenBucket(rate: 1000, burst: 500, now: start)
        #expect(bucket.reserve(500, now: start) == start)
        // 10,000 more bytes at 1000 B/s: the last is due 10 s later, however they are split.
        var due = start
        for _ in 0..<100 { due = bucket.reserve(100, now: start) }
        #expect(abs(seconds(due) - 10) < 1e-9)
    }

    @Test func waitsNeverDrift() {
        // Sending each chunk exactly when due keeps the long-run rate exact.
        var bucket = TokenBucket(rate: 8000, burst: 1024, now: start)
        var now = start
        var sent = 0
        while sent < 80_000 {
            now = max(now, bucket.reserve(1024, now: now))
            sent += 1024
        }
        // 80,896 bytes, the first 1,024 free: (80,896 − 1,024) / 8,000 s.
        #expect(abs(seconds(now) - Double(sent - 1024) / 8000) < 1e-6)
    }

    @Test func anIdleBucketRefillsOnlyUpToItsBurst() {
        var bucket = TokenBucket(rate: 1000, burst: 2000, now: start)
        _ = bucket.reserve(2000, now: start)
        let later = start.advanced(by: .seconds(60))
        #expect(bucket.reserve(2000, now: later) == later)
        #expect(abs(seconds(bucket.reserve(1000, now: later)) - 61) < 1e-9)
    }
}

@Suite struct MediaServerSettingsTests {
    @Test func anUpdateChangesOnlyTheKeysGiven() throws {
        var base = MediaServerSettings(throttleBytesPerSecond: 1000)
        base.latencyMilliseconds = 50
        let updated = try MediaServerSettings.decode(Data(#"{"serverBytesPerSecond": 5000}"#.utf8), over: base)
        #expect(updated.throttleBytesPerSecond == 1000)
        #expect(updated.serverBytesPerSecond == 5000)
        #expect(updated.latencyMilliseconds == 50)
        let cleared = try MediaServerSettings.decode(Data(#"{"throttleBytesPerSecond": null}"#.utf8), over: updated)
        #expect(cleared.throttleBytesPerSecond == nil && cleared.serverBytesPerSecond == 5000)
    }

    @Test func unknownKeysAndBadValuesAreRefused() throws {
        #expect(throws: DecodingError.self) {
            try MediaServerSettings.decode(Data(#"{"throttle": 5}"#.utf8), over: MediaServerSettings())
        }
        var negative = MediaServerSettings()
        negative.latencyMilliseconds = -1
        #expect(negative.problem == "latencyMilliseconds must be between 0 and 86400000 ms, not -1")
        #expect(
            MediaServerSettings(throttleBytesPerSecond: 0).problem
                == "throttleBytesPerSecond must be between 1 and 1099511627776, not 0, or null for no limit")
        var huge = MediaServerSettings()
        huge.firstByteDelayMilliseconds = .max
        #expect(huge.problem == "firstByteDelayMilliseconds must be between 0 and 86400000 ms, not \(Int.max)")
    }
}
