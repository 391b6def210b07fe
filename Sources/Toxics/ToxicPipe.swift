import Foundation
import HarnessTimeline

/// One direction of one connection through the toxics on it, as a value: bytes and the end of the
/// stream go in with the time they were read, and what to write, and when, comes out. The proxy does
/// the reading, the timers and the writing; every rule of Toxiproxy's toxics is decided here.
///
/// Toxics act in the order they were added, each on what the one before it let through. Whether a
/// toxic acts on this connection at all is drawn once, from its toxicity, when the pipe (or the toxic)
/// starts. Times never go back: each step is written no sooner than the one before it.
public struct ToxicPipe: Sendable {
    public typealias Instant = ContinuousClock.Instant

    /// How a toxic ends a connection: closed (FIN), or reset (RST, `SO_LINGER` 0).
    public enum Closing: String, Sendable, Equatable {
        case fin, reset
    }

    /// What the proxy does, and when.
    public enum Step: Sendable, Equatable {
        /// Write the next `count` bytes read (in order).
        case write(Int, at: Instant)
        /// Drop the next `count` bytes read.
        case drop(Int)
        /// End this direction (half-close the destination).
        case end(at: Instant)
        /// Close the whole connection.
        case close(Closing, at: Instant)
    }

    private typealias Event = ToxicPipeEvent

    private var stages: [Stage]
    private var random: SplitMix64
    /// Set once the pipe has ended or closed: later input is dropped.
    public private(set) var finished = false
    /// Whether any bytes came in: a `dns_delay` added later holds nothing (the connection has started).
    private var started = false

    /// - Parameters:
    ///   - toxics: the toxics on this direction, in the order they were added.
    ///   - seed: draws toxicity and jitter; the same seed, the same draws.
    public init(toxics: [Toxic], seed: UInt64, at now: Instant) {
        random = SplitMix64(seed: seed)
        stages = []
        for toxic in toxics { stages.append(Stage(toxic, at: now, random: &random)) }
    }

    /// The toxics on this direction, in order.
    public var toxics: [Toxic] { stages.map(\.toxic) }

    /// Whether no toxic acts: the proxy then writes what it reads at once.
    public var isPassThrough: Bool { stages.allSatisfy { !$0.acts } }

    /// The toxics changed (added, updated, removed): toxics kept by name keep their state (`limit_data`'s
    /// count of bytes); new or updated ones draw their toxicity again, as Toxiproxy restarts them.
    /// Removing a `timeout` toxic closes the connection, as Toxiproxy's does.
    public mutating func update(toxics: [Toxic], at now: Instant) -> [Step] {
        var kept: [Stage] = []
        for toxic in toxics {
            if var old = stages.first(where: { $0.toxic.name == toxic.name }), old.toxic == toxic {
                old.toxic = toxic
                kept.append(old)
            } else {
                var stage = Stage(toxic, at: now, random: &random)
                if let old = stages.first(where: { $0.toxic.name == toxic.name }) { stage.sent = old.sent }
                stage.held = started
                kept.append(stage)
            }
        }
        let removedTimeout = stages.contains { old in
            old.acts && old.toxic.kind == .timeout && !toxics.contains { $0.name == old.toxic.name }
        }
        stages = kept
        guard removedTimeout, !finished else { return [] }
        finished = true
        return [.close(.fin, at: now)]
    }

    /// `count` bytes were read at `now`.
    public mutating func receive(_ count: Int, at now: Instant) -> [Step] {
        guard !finished else { return [.drop(count)] }
        started = true
        return run([(.data(count), now)], dropping: count)
    }

    /// The source ended at `now`.
    public mutating func end(at now: Instant) -> [Step] {
        guard !finished else { return [] }
        return run([(.end, now)], dropping: 0)
    }

    /// After ``update(toxics:at:)``: bytes the pipe had let through (`passed`) or held (`held`, by a
    /// toxic losing everything) that the proxy has not written yet go through the toxics again from
    /// `now`, so that a change of toxics reaches every byte still in the network, as a real network's
    /// change reaches the packets in it. Each toxic starts its schedule afresh; `limit_data` takes back
    /// what it counted of them (the held ones only if it stands before the toxic that held them). The
    /// proxy then feeds them (and the end, if the source had ended) with ``receive(_:at:)`` and
    /// ``end(at:)``. Call it with the stages as they were when the bytes went in, before the update.
    public mutating func requeue(passed: Int, held: Int, at now: Instant) {
        finished = false
        let holder =
            stages.firstIndex { $0.acts && $0.toxic.kind == .loss && $0.toxic["per_million"] >= 1_000_000 }
            ?? stages.endIndex
        for index in stages.indices {
            stages[index].ready = now
            guard stages[index].toxic.kind == .limitData else { continue }
            let counted = passed + (index < holder ? held : 0)
            stages[index].sent = max(stages[index].sent - Int64(counted), 0)
        }
    }

    /// The earliest moment a toxic wants to act with no input (a `timeout` closing), if any.
    public var deadline: Instant? {
        guard !finished else { return nil }
        return stages.compactMap(\.deadline).min()
    }

    /// Acts on the deadlines that have passed at `now`.
    public mutating func expire(at now: Instant) -> [Step] {
        guard !finished else { return [] }
        for index in stages.indices {
            guard let deadline = stages[index].deadline, deadline <= now else { continue }
            stages[index].deadline = nil
            stages[index].closed = true
            var events: [(Event, Instant)] = [(.close(.fin), deadline)]
            for later in stages.indices where later > index {
                events = stages[later].process(events, random: &random)
            }
            return steps(events, dropping: 0)
        }
        return []
    }

    private mutating func run(_ input: [(Event, Instant)], dropping count: Int) -> [Step] {
        var events = input
        for index in stages.indices { events = stages[index].process(events, random: &random) }
        return steps(events, dropping: count)
    }

    /// The stages' output as steps: what was not written of the bytes read is dropped.
    private mutating func steps(_ events: [(Event, Instant)], dropping count: Int) -> [Step] {
        var steps: [Step] = []
        var written = 0
        for (event, at) in events {
            switch event {
            case .data(let bytes):
                written += bytes
                steps.append(.write(bytes, at: at))
            case .hold(let bytes):
                // Neither written nor dropped: the proxy keeps them until ``requeue(_:at:)``.
                written += bytes
            case .end:
                finished = true
                steps.append(.end(at: at))
            case .close(let how):
                finished = true
                steps.append(.close(how, at: at))
            }
        }
        if count > written { steps.append(.drop(count - written)) }
        return steps
    }
}

/// One toxic's state on one direction of one connection.
private struct Stage: Sendable {
    typealias Instant = ContinuousClock.Instant
    typealias Event = (ToxicPipeEvent, Instant)

    var toxic: Toxic
    /// Whether the toxicity draw chose this connection.
    let acts: Bool
    /// The earliest the next output may go: output never goes back in time.
    var ready: Instant
    /// `limit_data`: bytes let through so far (kept when the toxic is updated).
    var sent: Int64 = 0
    /// `timeout`: when the connection closes if no data comes.
    var deadline: Instant?
    /// Nothing passes once the toxic has ended the stream.
    var closed = false
    /// `dns_delay`: whether the first bytes have been held.
    var held = false

    init(_ toxic: Toxic, at now: Instant, random: inout SplitMix64) {
        self.toxic = toxic
        // As Toxiproxy: acts when a uniform draw in [0, 1) is below the toxicity.
        acts = random.unit() < toxic.toxicity
        ready = now
        if acts, toxic.kind == .timeout, toxic["timeout"] > 0 { deadline = now + .milliseconds(toxic["timeout"]) }
    }
}

/// What flows between stages.
enum ToxicPipeEvent: Equatable {
    case data(Int)
    /// Bytes a toxic holds until the toxics change (all of them lost, and sent again only then).
    case hold(Int)
    case end
    case close(ToxicPipe.Closing)
}

extension Stage {
    /// This stage's output for `events`, in order.
    mutating func process(_ events: [Event], random: inout SplitMix64) -> [Event] {
        var output: [Event] = []
        for (event, at) in events {
            if closed { continue }
            if case .hold = event {
                output.append((event, at))
                continue
            }
            if case .close = event {
                closed = true
                output.append((event, max(at, ready)))
                continue
            }
            guard acts else {
                output.append((event, at))
                continue
            }
            act(on: event, at: at, into: &output, random: &random)
        }
        return output
    }

    private mutating func act(
        on event: ToxicPipeEvent, at: Instant, into output: inout [Event], random: inout SplitMix64
    ) {
        switch toxic.kind {
        case .noop, .httpStatus, .httpCut:
            // HTTP toxics act on the bytes themselves, before the pipe (``HTTPFault``).
            output.append((event, at))
        case .latency:
            var delay = toxic["latency"]
            let jitter = toxic["jitter"]
            if case .data = event, jitter > 0 { delay += Int64(random.below(UInt64(jitter) * 2)) - jitter }
            let when = max(event == .end ? at : at + .milliseconds(max(delay, 0)), ready)
            ready = when
            output.append((event, when))
        case .bandwidth:
            guard case .data(var count) = event else {
                output.append((event, max(at, ready)))
                return
            }
            // `rate` KB/s is `rate` bytes a millisecond; a piece is at most 100 ms of it.
            let rate = max(toxic["rate"], 1)
            let piece = Int(min(rate * 100, Int64(Int.max / 2)))
            var start = max(at, ready)
            while count > 0 {
                let bytes = min(count, piece)
                start = start + .microseconds(Int64(bytes) * 1000 / rate)
                output.append((.data(bytes), start))
                count -= bytes
            }
            ready = start
        case .slowClose:
            let when = event == .end ? max(at, ready) + .milliseconds(toxic["delay"]) : max(at, ready)
            ready = when
            output.append((event, when))
        case .timeout:
            if case .data = event, toxic["timeout"] > 0 { deadline = at + .milliseconds(toxic["timeout"]) }
            if event == .end {
                deadline = nil
                output.append((.end, max(at, ready)))
            }
        case .resetPeer:
            closed = true
            output.append((.close(.reset), max(at, ready) + .milliseconds(toxic["timeout"])))
        case .slicer:
            guard case .data(let count) = event else {
                output.append((event, max(at, ready)))
                return
            }
            var when = max(at, ready)
            let delay = Duration.microseconds(toxic["delay"])
            for size in Self.slices(
                count, average: Int(toxic["average_size"]), variation: Int(toxic["size_variation"]), random: &random)
            {
                output.append((.data(size), when))
                when = when + delay
            }
            ready = when
        case .loss:
            // Everything lost, the end of the stream too: held until the toxics change, as TCP keeps
            // sending them again until the network lets them through.
            guard toxic["per_million"] < 1_000_000 else {
                if case .data(let count) = event { output.append((.hold(count), at)) }
                return
            }
            guard case .data(let count) = event else {
                output.append((event, max(at, ready)))
                return
            }
            ready = lose(count, from: max(at, ready), into: &output, random: &random)
        case .dnsDelay:
            if !held {
                held = true
                ready = max(at, ready) + .milliseconds(toxic["delay"])
            }
            output.append((event, max(at, ready)))
        case .limitData:
            guard case .data(let count) = event else {
                output.append((event, max(at, ready)))
                return
            }
            let remaining = max(toxic["bytes"] - sent, 0)
            let passed = Int(min(Int64(count), remaining))
            if passed > 0 {
                output.append((.data(passed), max(at, ready)))
                sent += Int64(passed)
            }
            if toxic["bytes"] - sent <= 0 {
                closed = true
                output.append((.close(.fin), max(at, ready)))
            }
        }
    }

    /// The `loss` toxic on `count` bytes going out at `start`: each 1448-byte segment is lost with the
    /// toxic's chance and sent again after the retransmission wait, doubled (up to a minute) each time it
    /// is lost again; it and everything behind it go out then. Returns when the last byte goes.
    private func lose(
        _ count: Int, from start: Instant, into output: inout [Event], random: inout SplitMix64
    ) -> Instant {
        let chance = toxic["per_million"]
        guard chance < 1_000_000 else { return start }
        let segment = 1448
        let firstWait = Duration.milliseconds(toxic["retransmit"] > 0 ? toxic["retransmit"] : 200)
        var when = start
        var pending = 0
        var remaining = count
        while remaining > 0 {
            let size = min(remaining, segment)
            remaining -= size
            let losses = random.losses(perMillion: chance)
            if losses > 0 {
                if pending > 0 { output.append((.data(pending), when)) }
                pending = 0
                when = when + Retransmission.wait(losses: losses, first: firstWait)
            }
            pending += size
        }
        if pending > 0 { output.append((.data(pending), when)) }
        return when
    }

    /// Toxiproxy's slicer: a chunk more than `variation` over `average` is split about in half (the
    /// middle moved by up to ± `variation`), and each half again, until every piece is small enough.
    static func slices(_ count: Int, average: Int, variation: Int, random: inout SplitMix64) -> [Int] {
        var pieces: [Int] = []
        var pending = [count]
        while let size = pending.popLast() {
            if size - average <= variation || size <= 1 {
                if size > 0 { pieces.append(size) }
                continue
            }
            var middle = size / 2
            if variation > 0 { middle += Int(random.below(UInt64(variation) * 2)) - variation }
            middle = min(max(middle, 1), size - 1)
            // The right half waits under the left one, so pieces come out in order.
            pending.append(size - middle)
            pending.append(middle)
        }
        return pieces
    }
}
