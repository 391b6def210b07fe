import HarnessTimeline
import NIOCore
import NIOPosix
import Toxics

#if canImport(Glibc)
import Glibc
#endif

/// One client connection through a proxy and the connection to the upstream it opened: two channels on
/// one event loop, and for each direction a ``ToxicPipe`` that says when each byte read goes out.
/// Confined to that event loop.
final class ProxiedConnection {
    typealias Instant = ContinuousClock.Instant

    /// Bytes held per direction (read, waiting for their moment) before reading from the source stops.
    static let heldLimit = 4 << 20
    /// Steps waiting per direction before reading stops: a slicer of 1-byte pieces makes one a byte.
    static let actionLimit = 65_536

    let client: any Channel
    let upstream: any Channel
    var directions: [ToxicStream: Direction]
    let report: @Sendable (ConnectionReport) -> Void
    var closed = false

    /// What a proxy learns when a toxic ends a connection.
    struct ConnectionReport: Sendable {
        var stream: ToxicStream
        var how: ToxicPipe.Closing
        /// Bytes written in that direction before the end.
        var written: Int
        /// An `http_status` toxic answered the request with this status in the server's place.
        var answered: Int?
    }

    /// One way through the connection: bytes read from `source`, held, written to `destination`.
    struct Direction {
        var pipe: ToxicPipe
        /// Bytes read and not yet written or dropped, oldest first.
        var held = CircularBuffer<ByteBuffer>()
        var heldBytes = 0
        /// What the pipe decided and is not done yet, in order.
        var actions = CircularBuffer<ToxicPipe.Step>()
        var timer: Scheduled<Void>?
        var timerAt: Instant?
        /// A toxic's own deadline (`timeout`), timed apart from the steps.
        var deadlineTimer: Scheduled<Void>?
        var deadlineAt: Instant?
        var written = 0
        /// The source ended (its end may still be held by a toxic).
        var inputEnded = false
        /// The destination was ended.
        var ended = false
        /// Once what is going out has gone, the connection closes this way: the source reset (the reset
        /// follows its data), or an HTTP toxic cut the message (`cut`: reported as a toxic's cut).
        var closeWhenDone: (how: ToxicPipe.Closing, cut: Bool)?
        /// The HTTP toxic acting on this direction, if any (``HTTPFault``).
        var http: HTTPFault?
        /// Bytes the HTTP toxic holds while it waits for a request's head; they go on if it lets them.
        var httpHeld: [ByteBuffer] = []
        /// A read the source asked for while reading was paused.
        var readWaiting = false
        var unflushed = false

        /// Takes the next `count` held bytes, a slice at a time.
        mutating func take(_ count: Int, _ each: (ByteBuffer) -> Void) {
            var remaining = count
            while remaining > 0, var buffer = held.first {
                let slice = buffer.readSlice(length: min(remaining, buffer.readableBytes))!
                remaining -= slice.readableBytes
                heldBytes -= slice.readableBytes
                if buffer.readableBytes == 0 {
                    held.removeFirst()
                } else {
                    held[held.startIndex] = buffer
                }
                each(slice)
            }
        }
    }

    init(
        client: any Channel, upstream: any Channel, toxics: [Toxic], seed: UInt64,
        report: @escaping @Sendable (ConnectionReport) -> Void
    ) {
        self.client = client
        self.upstream = upstream
        self.report = report
        let now = ContinuousClock.now
        directions = [
            .upstream: Direction(
                pipe: ToxicPipe(toxics: toxics.filter { $0.stream == .upstream }, seed: seed, at: now)),
            .downstream: Direction(
                pipe: ToxicPipe(toxics: toxics.filter { $0.stream == .downstream }, seed: seed &+ 1, at: now)),
        ]
        // An HTTP toxic acts on the connection by its own toxicity draw, from a seed of its own.
        var draws = SplitMix64(seed: seed &+ 2)
        for stream in ToxicStream.allCases {
            for toxic in toxics where toxic.stream == stream {
                guard let fault = HTTPFault(toxic) else { continue }
                if draws.unit() < toxic.toxicity, directions[stream]?.http == nil { directions[stream]?.http = fault }
            }
        }
        scheduleDeadline(.upstream)
        scheduleDeadline(.downstream)
    }

    func destination(_ stream: ToxicStream) -> any Channel { stream == .upstream ? upstream : client }
    func source(_ stream: ToxicStream) -> any Channel { stream == .upstream ? client : upstream }

    // MARK: Input

    /// Bytes read from the source of `stream`.
    func read(_ bytes: ByteBuffer, on stream: ToxicStream) {
        guard !closed, var direction = directions[stream], direction.closeWhenDone == nil else { return }
        var bytes = bytes
        if var http = direction.http {
            let verdict = bytes.withUnsafeReadableBytes { http.inspect($0) }
            direction.http = http
            switch verdict {
            case .pass:
                // What it held while it looked goes first.
                if !direction.httpHeld.isEmpty {
                    var all = ByteBuffer()
                    for var held in direction.httpHeld { all.writeBuffer(&held) }
                    all.writeImmutableBuffer(bytes)
                    bytes = all
                    direction.httpHeld = []
                }
            case .hold:
                direction.httpHeld.append(bytes)
                directions[stream] = direction
                return
            case .answer(let response):
                directions[stream] = direction
                answer(response, on: stream)
                return
            case .cut(let keep, let how):
                bytes = bytes.getSlice(at: bytes.readerIndex, length: keep) ?? bytes
                direction.closeWhenDone = (how, true)
            }
        }
        if direction.pipe.isPassThrough, direction.actions.isEmpty, direction.heldBytes == 0, !direction.pipe.finished {
            // No toxic acts: straight through, flushed when the read completes.
            direction.written += bytes.readableBytes
            direction.unflushed = true
            directions[stream] = direction
            destination(stream).write(bytes, promise: nil)
            if direction.closeWhenDone != nil { perform(stream) }
            return
        }
        direction.held.append(bytes)
        direction.heldBytes += bytes.readableBytes
        let steps = direction.pipe.receive(bytes.readableBytes, at: .now)
        direction.actions.append(contentsOf: steps)
        directions[stream] = direction
        perform(stream)
    }

    /// The source of `stream` finished a burst of reads.
    func readComplete(on stream: ToxicStream) {
        guard directions[stream]?.unflushed == true else { return }
        directions[stream]?.unflushed = false
        destination(stream).flush()
    }

    /// The source of `stream` will send nothing more.
    func inputEnded(on stream: ToxicStream) {
        guard !closed, var direction = directions[stream], !direction.ended, !direction.inputEnded,
            direction.closeWhenDone == nil
        else { return }
        direction.inputEnded = true
        direction.actions.append(contentsOf: direction.pipe.end(at: .now))
        directions[stream] = direction
        perform(stream)
    }

    /// The source of `stream` went away without a half-close (it reset, or closed both ways): what it
    /// sent still goes out as its toxics say, and nothing more can reach it.
    func peerClosed(_ stream: ToxicStream) {
        guard !closed else { return }
        inputEnded(on: stream)
        abandon(stream.reversed)
        if directions[stream]?.ended == true { close(.fin) }
    }

    /// `stream` can no longer reach its destination (that peer went away): its timers stop and what it
    /// holds is dropped.
    private func abandon(_ stream: ToxicStream) {
        guard var direction = directions[stream] else { return }
        direction.timer?.cancel()
        direction.timer = nil
        direction.timerAt = nil
        direction.deadlineTimer?.cancel()
        direction.deadlineTimer = nil
        direction.deadlineAt = nil
        direction.actions.removeAll()
        direction.held.removeAll()
        direction.heldBytes = 0
        direction.httpHeld = []
        direction.ended = true
        directions[stream] = direction
    }

    /// An `http_status` toxic's answer to the request read on `stream`: written back to its source,
    /// then the connection closes. The server never sees the request.
    private func answer(_ response: [UInt8], on stream: ToxicStream) {
        let status = Int(String(decoding: response.dropFirst(9).prefix(3), as: UTF8.self)) ?? 0
        source(stream).write(ByteBuffer(bytes: response), promise: nil)
        report(ConnectionReport(stream: stream, how: .fin, written: 0, answered: status))
        close(.fin)
    }

    /// The source of `stream` reset: what it sent before still goes out as its toxics say, then the
    /// destination is reset (a reset travels behind the data); nothing more can reach the source.
    func peerReset(_ stream: ToxicStream) {
        guard !closed, directions[stream] != nil else { return }
        if directions[stream]?.closeWhenDone == nil { directions[stream]?.closeWhenDone = (.reset, false) }
        abandon(stream.reversed)
        perform(stream)
    }

    /// The toxics changed: each direction takes the new list, and what it read but has not written yet
    /// goes through the new toxics from now (``ToxicPipe/requeue(passed:held:at:)``): bytes a toxic was
    /// holding back or spreading out get the new network, not the old one. A direction whose toxics did
    /// not change keeps its schedule, and one a toxic is about to close keeps that fate.
    func update(toxics: [Toxic]) {
        guard !closed else { return }
        let now = ContinuousClock.now
        for stream in ToxicStream.allCases {
            guard var direction = directions[stream] else { continue }
            let mine = toxics.filter { $0.stream == stream }
            // An HTTP toxic taken off stops acting; one added acts on connections opened later.
            if let http = direction.http, !mine.contains(where: { HTTPFault($0)?.rule == http.rule }) {
                directions[stream]?.http = nil
                direction.http = nil
                // What it held goes on, as if it had never been there.
                let held = direction.httpHeld
                direction.httpHeld = []
                directions[stream] = direction
                for bytes in held { read(bytes, on: stream) }
                guard let updated = directions[stream] else { continue }
                direction = updated
            }
            guard mine != direction.pipe.toxics else { continue }
            let pending = Array(direction.actions)
            let closing = pending.contains { if case .close = $0 { true } else { false } }
            guard !closing, !direction.ended else {
                direction.actions.append(contentsOf: direction.pipe.update(toxics: mine, at: now))
                directions[stream] = direction
                perform(stream)
                scheduleDeadline(stream)
                continue
            }
            // What is still to go: the bytes of pending writes, and those held past every pending step
            // (a toxic keeps them until the toxics change). Bytes pending drops were for go now.
            direction.actions.removeAll()
            var kept = CircularBuffer<ByteBuffer>()
            var passed = 0
            for action in pending {
                if case .write(let count, _) = action {
                    direction.take(count) { kept.append($0) }
                    passed += count
                }
                if case .drop(let count) = action { direction.take(count) { _ in } }
            }
            let held = direction.heldBytes
            direction.take(held) { kept.append($0) }
            direction.held = kept
            direction.heldBytes = passed + held
            direction.pipe.requeue(passed: passed, held: held, at: now)
            var steps = direction.pipe.update(toxics: mine, at: now)
            if !direction.pipe.finished {
                if passed + held > 0 { steps += direction.pipe.receive(passed + held, at: now) }
                if direction.inputEnded { steps += direction.pipe.end(at: now) }
            }
            direction.actions.append(contentsOf: steps)
            directions[stream] = direction
            perform(stream)
            scheduleDeadline(stream)
        }
    }

    // MARK: Output

    /// Carries out the actions that are due, in order, and sets a timer for the next one. What was
    /// written is flushed before the direction ends or the connection closes, which would drop it.
    func perform(_ stream: ToxicStream) {
        guard !closed, var direction = directions[stream] else { return }
        let now = ContinuousClock.now
        let destination = destination(stream)
        var wrote = false
        func flush() { if wrote { destination.flush() } }
        while let action = direction.actions.first {
            if let at = action.time, at > now {
                directions[stream] = direction
                flush()
                schedule(stream, at: at)
                scheduleDeadline(stream)
                return
            }
            direction.actions.removeFirst()
            switch action {
            case .write(let count, _):
                direction.take(count) { slice in
                    destination.write(slice, promise: nil)
                    wrote = true
                }
                direction.written += count
            case .drop(let count):
                direction.take(count) { _ in }
            case .end:
                guard direction.closeWhenDone == nil else {
                    // A cut or a reset is waiting for this end: it ends the connection its own way.
                    continue
                }
                direction.ended = true
                directions[stream] = direction
                flush()
                endDirection(stream)
                return
            case .close(let how, _):
                directions[stream] = direction
                flush()
                report(ConnectionReport(stream: stream, how: how, written: direction.written))
                close(how)
                return
            }
        }
        directions[stream] = direction
        flush()
        if let (how, cut) = direction.closeWhenDone, direction.heldBytes == 0 {
            // Everything going out has gone: the reset (or the HTTP toxic's cut) follows.
            if cut { report(ConnectionReport(stream: stream, how: how, written: direction.written)) }
            close(how, afterWrites: true)
            return
        }
        scheduleDeadline(stream)
        resumeReadingIfRoom(stream)
    }

    private func schedule(_ stream: ToxicStream, at: Instant) {
        guard !closed, directions[stream]?.timerAt != at else { return }
        directions[stream]?.timer?.cancel()
        directions[stream]?.timerAt = at
        let loop = client.eventLoop
        let delay = Self.timeAmount(until: at)
        directions[stream]?.timer = loop.assumeIsolated().scheduleTask(in: delay) { [self] in
            directions[stream]?.timer = nil
            directions[stream]?.timerAt = nil
            perform(stream)
            scheduleDeadline(stream)
        }
    }

    /// From now to `instant`, as NIO counts time (0 when it has passed).
    static func timeAmount(until instant: Instant) -> TimeAmount {
        let left = ContinuousClock.now.duration(to: instant)
        guard left > .zero else { return .zero }
        let (seconds, attoseconds) = left.components
        return .nanoseconds(min(seconds, 86_400 * 365) * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// A toxic that acts without input (`timeout`) gets a timer for its deadline, set again whenever
    /// the deadline moves.
    func scheduleDeadline(_ stream: ToxicStream) {
        guard !closed, let direction = directions[stream] else { return }
        let deadline = direction.pipe.deadline
        guard deadline != direction.deadlineAt else { return }
        direction.deadlineTimer?.cancel()
        directions[stream]?.deadlineTimer = nil
        directions[stream]?.deadlineAt = deadline
        guard let deadline else { return }
        directions[stream]?.deadlineTimer = client.eventLoop.assumeIsolated().scheduleTask(
            in: Self.timeAmount(until: deadline)
        ) { [self] in
            directions[stream]?.deadlineTimer = nil
            directions[stream]?.deadlineAt = nil
            guard !closed, var direction = directions[stream] else { return }
            direction.actions.append(contentsOf: direction.pipe.expire(at: .now))
            directions[stream] = direction
            perform(stream)
        }
    }

}

extension ToxicPipe.Step {
    /// When the step is due; a drop is due as soon as the steps before it are done.
    var time: ContinuousClock.Instant? {
        switch self {
        case .write(_, let at), .end(let at), .close(_, let at): at
        case .drop: nil
        }
    }
}
