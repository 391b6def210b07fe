/// Waits `duration`, or less when the task is cancelled.
///
/// A sleep throws nothing but `CancellationError`, and every caller of this looks at `Task.isCancelled`
/// or a deadline of its own once it returns, so the error would tell it nothing new: this says so once,
/// instead of a `try?` at each sleep.
public func pause(for duration: Duration) async {
    await pause(for: duration, clock: ContinuousClock())
}

/// Waits `duration` on `clock`, or less when the task is cancelled (see ``pause(for:)``).
public func pause<C: Clock>(for duration: C.Duration, clock: C) async {
    do {
        try await clock.sleep(for: duration)
    } catch {
        // Cancelled: the caller looks at the task's cancellation itself.
    }
}
