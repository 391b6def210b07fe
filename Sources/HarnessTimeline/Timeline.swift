import Foundation

/// The run's single ordered stream of events: every component publishes into it, and assertions, the
/// live view and the reports read from it.
///
/// Publishing is synchronous and cheap (a lock and an append) so that it can be called from event-loop
/// threads. Readers either take a snapshot or subscribe to an `AsyncStream` that starts with everything
/// already published, so a subscriber can never miss an event that raced its subscription.
public final class Timeline: Sendable {
    private struct State {
        /// With a retention: the generation before `events`, dropped whole when `events` fills up.
        var older: [TimelineEvent] = []
        var events: [TimelineEvent] = []
        /// How many events were ever published, including those no longer kept.
        var published = 0
        var subscribers: [UUID: AsyncStream<TimelineEvent>.Continuation] = [:]
        var finished = false
    }

    private let state = LockedState(State())
    private let start = ContinuousClock.now
    /// The wall-clock time at `start`: an event's date is this plus its elapsed time, one clock read.
    private let startDate = Date()
    private let retention: Int?
    /// A stamped view's timeline, which holds the events; nil for a timeline of its own.
    private let base: Timeline?
    /// What a stamped view adds to every event published through it.
    private let stamp: EventAttributes

    /// - Parameter retention: keep only the newest this many events (for a long-running `harness
    ///   serve`, whose timeline nobody reads back); nil keeps them all, as a run's reports need.
    public init(retention: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "a timeline must keep at least one event")
        self.retention = retention
        base = nil
        stamp = [:]
    }

    private init(base: Timeline, stamp: EventAttributes) {
        retention = nil
        self.base = base
        self.stamp = stamp
    }

    /// The same timeline, seen by a component that adds `attributes` to every event it publishes (one
    /// of several devices adds its name): reading, waiting and subscribing see every event, as here.
    /// An attribute the publisher gives itself keeps its value.
    public func stamping(_ attributes: EventAttributes) -> Timeline {
        Timeline(base: base ?? self, stamp: stamp.merging(attributes))
    }

    /// Appends an event and hands it to every subscriber.
    @discardableResult
    public func publish(_ kind: EventKind, source: String, _ attributes: EventAttributes = [:]) -> TimelineEvent {
        if let base { return base.publish(kind, source: source, attributes.merging(stamp)) }
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var forgotten: [TimelineEvent] = []
        let event = state.withLock { state in
            state.published += 1
            let event = TimelineEvent(
                sequence: state.published, elapsed: seconds, date: startDate.addingTimeInterval(seconds), kind: kind,
                source: source,
                attributes: attributes)
            state.events.append(event)
            // Forgetting a whole generation at a time keeps its cost constant per event; the events are
            // freed after the lock is released, so other publishers do not wait for it.
            if let retention, state.events.count >= retention {
                forgotten = state.older
                state.older = state.events
                state.events = []
                state.events.reserveCapacity(retention)
            }
            for continuation in state.subscribers.values { continuation.yield(event) }
            return event
        }
        // The forgotten generation is freed here, outside the lock.
        withExtendedLifetime(forgotten) {}
        return event
    }

    /// Everything published so far, in order (the newest `retention` or more, when limited).
    public var events: [TimelineEvent] {
        if let base { return base.events }
        // Joined after the lock is released: publishers on the event loops wait for it.
        let (older, newer) = state.withLock { ($0.older, $0.events) }
        return older + newer
    }

    /// A stream of every event, past and future, ending when ``finish()`` is called.
    public func subscribe() -> AsyncStream<TimelineEvent> {
        if let base { return base.subscribe() }
        let (stream, continuation) = AsyncStream.makeStream(of: TimelineEvent.self)
        let id = UUID()
        state.withLock { state in
            for event in state.older { continuation.yield(event) }
            for event in state.events { continuation.yield(event) }
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
    /// - Throws: ``TimelineWaitTimeout`` naming `description` when `timeout` passes first.
    public func waitFor(
        _ description: String, timeout: Duration, where predicate: @escaping @Sendable (TimelineEvent) -> Bool
    ) async throws -> TimelineEvent {
        let stream = subscribe()
        return try await withThrowingTaskGroup(of: TimelineEvent?.self) { group in
            group.addTask {
                for await event in stream where predicate(event) { return event }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let event = first else {
                try Task.checkCancellation()
                throw TimelineWaitTimeout(description: description, timeout: timeout)
            }
            return event
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
