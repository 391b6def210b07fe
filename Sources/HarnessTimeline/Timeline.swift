import Foundation

/// The run's single ordered stream of events: every component publishes into it, and assertions, the
/// live view and the reports read from it.
///
/// Publishing is synchronous and cheap (a lock and an append) so that it can be called from event-loop
/// threads. Readers either take a snapshot or subscribe to an `AsyncStream` that starts with everything
/// already published, so a subscriber can never miss an event that raced its subscription.
public final class Timeline: Sendable {
    private struct State {
        /// The events kept: all of them, or the newest within a retention and a memory budget.
        var events: BoundedHistory<TimelineEvent>
        /// How many events were ever published, including those no longer kept.
        var published = 0
        var subscribers: [UUID: AsyncStream<TimelineEvent>.Continuation] = [:]
        var finished = false
    }

    private let state: LockedState<State>
    /// The monotonic clock's reading at the start, in nanoseconds: read as a plain count, which costs an
    /// event less than `ContinuousClock`'s 128-bit durations. Unlike `ContinuousClock` it stops while the
    /// system sleeps, which a harness's machine does not do mid-run.
    private let start = DispatchTime.now().uptimeNanoseconds
    /// The wall-clock time at `start`: an event's date is this plus its elapsed time, one clock read.
    private let startDate = Date()
    /// Events are forgotten past a retention or a budget (and their size is estimated only then).
    private let limited: Bool
    /// A stamped view's timeline, which holds the events; nil for a timeline of its own.
    private let base: Timeline?
    /// What a stamped view adds to every event published through it.
    private let stamp: EventAttributes

    /// - Parameters:
    ///   - retention: keep only the newest events, this many unless the budget runs out first (for a
    ///     long-running `harness serve`); nil and no budget keep them all, as a run's reports need.
    ///   - budget: and never more than this many bytes of them, as ``estimatedBytes(of:)`` counts
    ///     them (``BoundedHistory``); nil: no memory limit.
    public init(retention: Int? = nil, budget: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "a timeline must keep at least one event")
        state = LockedState(State(events: BoundedHistory(retention: retention, budget: budget)))
        limited = retention != nil || budget != nil
        base = nil
        stamp = [:]
    }

    private init(base: Timeline, stamp: EventAttributes) {
        state = LockedState(State(events: BoundedHistory()))
        limited = false
        self.base = base
        self.stamp = stamp
    }

    /// What keeping `event` costs, estimated generously: its strings' bytes, and 64 bytes more for each
    /// (a string's storage and its slot in the list) on top of 256 for the event itself.
    public static func estimatedBytes(of event: TimelineEvent) -> Int {
        estimatedBytes(event.kind, event.source, event.attributes)
    }

    private static func estimatedBytes(_ kind: EventKind, _ source: String, _ attributes: EventAttributes) -> Int {
        var bytes = 256 + kind.rawValue.utf8.count + source.utf8.count
        attributes.forEachField { key, value in bytes += key.utf8.count + value.utf8.count + 64 }
        return bytes
    }

    /// The same timeline, seen by a component that adds `attributes` to every event it publishes (one
    /// of several devices adds its name): reading, waiting and subscribing see every event, as here.
    /// An attribute the publisher gives itself keeps its value.
    public func stamping(_ attributes: EventAttributes) -> Timeline {
        Timeline(base: base ?? self, stamp: stamp.merging(attributes))
    }

    /// Seconds since the timeline began, as an event published now would have.
    public var elapsed: Double {
        if let base { return base.elapsed }
        return Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
    }

    /// Appends an event and hands it to every subscriber.
    @discardableResult
    public func publish(_ kind: EventKind, source: String, _ attributes: EventAttributes = [:]) -> TimelineEvent {
        if let base { return base.publish(kind, source: source, attributes.merging(stamp)) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds &- start) / 1e9
        let bytes = limited ? Self.estimatedBytes(kind, source, attributes) : 0
        var forgotten: TimelineEvent?
        let event = state.withLock { state in
            state.published += 1
            let event = TimelineEvent(
                sequence: state.published, elapsed: seconds, date: startDate.addingTimeInterval(seconds), kind: kind,
                source: source,
                attributes: attributes)
            // A forgotten event is freed after the lock is released, so other publishers do not wait
            // for it.
            forgotten = state.events.append(event, bytes: bytes)
            for continuation in state.subscribers.values { continuation.yield(event) }
            return event
        }
        // The forgotten event is freed here, outside the lock.
        _ = consume forgotten
        return event
    }

    /// Everything published so far, in order (only the newest, when limited).
    public var events: [TimelineEvent] {
        if let base { return base.events }
        // Copied out after the lock is released: publishers on the event loops wait for it.
        let history = state.withLock { $0.events }
        return history.all
    }

    /// A stream of every event, past and future, ending when ``finish()`` is called.
    public func subscribe() -> AsyncStream<TimelineEvent> {
        if let base { return base.subscribe() }
        let (stream, continuation) = AsyncStream.makeStream(of: TimelineEvent.self)
        let id = UUID()
        state.withLock { state in
            state.events.forEach { continuation.yield($0) }
            if state.finished {
                continuation.finish()
            } else {
                state.subscribers[id] = continuation
            }
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription; later events are still recorded but no longer streamed.
    public func finish() {
        if let base { return base.finish() }
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    /// Waits for the first event, past or future, that satisfies `predicate`.
    ///
    /// - Throws: ``TimelineWaitTimeout`` naming `description` when `timeout` passes first, or
    ///   `CancellationError` when the task is cancelled.
    public func waitFor(
        _ description: String, timeout: Duration, where predicate: @escaping @Sendable (TimelineEvent) -> Bool
    ) async throws -> TimelineEvent {
        guard let event = await first(within: timeout, where: predicate) else {
            try Task.checkCancellation()
            throw TimelineWaitTimeout(description: description, timeout: timeout)
        }
        return event
    }

    /// The first event, past or future, that satisfies `predicate`; nil when `timeout` passes first,
    /// the timeline finishes, or the task is cancelled (for a caller that decides on the timeline as it
    /// then is, whichever of them it was).
    public func first(
        within timeout: Duration, where predicate: @escaping @Sendable (TimelineEvent) -> Bool
    ) async -> TimelineEvent? {
        let stream = subscribe()
        return await withTaskGroup(of: TimelineEvent?.self) { group in
            group.addTask {
                for await event in stream where predicate(event) { return event }
                return nil
            }
            group.addTask {
                await pause(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }
}

/// The event a caller waited for did not come in time.
public struct TimelineWaitTimeout: Error, CustomStringConvertible {
    /// What was awaited, in words.
    public var awaited: String
    public var timeout: Duration

    init(description: String, timeout: Duration) {
        self.awaited = description
        self.timeout = timeout
    }

    public var message: String { "no \(awaited) within \(timeout)" }
    public var description: String { message }
}
