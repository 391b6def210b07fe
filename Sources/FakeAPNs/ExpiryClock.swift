import Foundation
import HarnessTimeline

/// The clock store-and-forward runs on: `apns-expiration` is wall-clock epoch seconds. A protocol so a
/// test can move time itself instead of racing the real one.
protocol ExpiryClock: Sendable {
    var now: Date { get }
    /// Returns at `date` or a little after, or early when the task is cancelled.
    func sleep(until date: Date) async
}

/// The system's wall clock. A sleep lasts at most a day, so a far expiry (any integer is a valid
/// `apns-expiration`) never becomes an out-of-range duration; the caller looks again when it wakes.
struct WallClock: ExpiryClock {
    var now: Date { Date() }

    func sleep(until date: Date) async {
        let seconds = min(max(0, date.timeIntervalSinceNow), 86_400)
        await pause(for: .seconds(seconds))
    }
}
