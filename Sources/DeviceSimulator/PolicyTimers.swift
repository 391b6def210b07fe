/// Every policy timer the device runs, by what it is for: one place that starts, replaces, cancels and
/// forgets them. A timer that fires reports its purpose and generation back; only the timer still current
/// for that purpose counts (``take(_:generation:)``), so a timer cancelled or replaced while its sleep was
/// ending does nothing.
struct PolicyTimers {
    /// What a timer is for. One timer per purpose: starting one replaces the one running.
    enum Purpose: Hashable, Sendable {
        /// Suspension a moment after the app left the foreground.
        case suspension(bundleId: String)
        /// The release of the push held back by the wake budget or the boot delay.
        case heldPushRelease(bundleId: String)
        /// The 30 s watchdog of a completion handler the app owes (a push, a fetch).
        case completionWatchdog(bundleId: String, completionId: Int)
        /// The watchdog of `handleEventsForBackgroundURLSession`'s completion handler.
        case sessionHandlerWatchdog(bundleId: String, session: String)
        /// The allowance of a background task (`beginBackgroundTask`) in the background.
        case backgroundTime(bundleId: String, identifier: Int)
        /// The moment an expired background task's handler has to end it before the watchdog acts.
        case backgroundTaskGrace(bundleId: String, identifier: Int)
        /// A scheduled notification's trigger.
        case notificationTrigger(bundleId: String, identifier: String)

        var bundleId: String {
            switch self {
            case .suspension(let bundleId), .heldPushRelease(let bundleId),
                .completionWatchdog(let bundleId, _), .sessionHandlerWatchdog(let bundleId, _),
                .backgroundTime(let bundleId, _), .backgroundTaskGrace(let bundleId, _),
                .notificationTrigger(let bundleId, _):
                bundleId
            }
        }
    }

    private var running: [Purpose: (generation: Int, task: Task<Void, Never>)] = [:]
    private var nextGeneration = 1

    /// Starts a timer for `purpose`, replacing the one running, if any: after `delay` of `clock`'s
    /// policy time, unless cancelled, `fire` is called with the purpose and the timer's generation.
    mutating func start(
        _ purpose: Purpose, after delay: Duration, on clock: PolicyClock,
        fire: @escaping @Sendable (Purpose, Int) async -> Void
    ) {
        cancel(purpose)
        let generation = nextGeneration
        nextGeneration += 1
        // Kept in `running` by purpose: replaced, cancel(_:) and cancelAll() (the device's shutdown)
        // cancel it.
        let task = Task {
            await clock.pause(for: delay)
            guard !Task.isCancelled else { return }
            await fire(purpose, generation)
        }
        running[purpose] = (generation, task)
    }

    /// Whether a timer for `purpose` is running.
    func isRunning(_ purpose: Purpose) -> Bool { running[purpose] != nil }

    /// A timer fired: whether it is still the current one for its purpose (then it is forgotten, and its
    /// action is due).
    mutating func take(_ purpose: Purpose, generation: Int) -> Bool {
        guard running[purpose]?.generation == generation else { return false }
        running[purpose] = nil
        return true
    }

    /// Cancels the timer for `purpose`; whether one was running.
    @discardableResult
    mutating func cancel(_ purpose: Purpose) -> Bool {
        guard let timer = running.removeValue(forKey: purpose) else { return false }
        timer.task.cancel()
        return true
    }

    /// Cancels every timer of the app for which `matching` holds (all of them by default).
    mutating func cancelAll(of bundleId: String, where matching: (Purpose) -> Bool = { _ in true }) {
        for purpose in running.keys where purpose.bundleId == bundleId && matching(purpose) { cancel(purpose) }
    }

    /// Cancels every timer of the device.
    mutating func cancelAll() {
        for purpose in running.keys { cancel(purpose) }
    }

    /// The purposes of the app's running timers.
    func purposes(of bundleId: String) -> [Purpose] { running.keys.filter { $0.bundleId == bundleId } }
}
