import NIOCore
import NIOHPACK
import NIOHTTP2

/// The provider's end of one HTTP/2 connection to APNs, driven with raw frames: a batch of requests
/// written at once and flushed once, and its promise completed when APNs has answered every request in
/// it. Which stream is which request, and what an answer is, ``APNsStreams`` decides.
///
/// Streams get no channels of their own (NIOHTTP2's multiplexer), for the reason FakeAPNs's server
/// handler gives: a push is one small request and a one-frame answer, and a channel per stream costs
/// more than the push. So this handler keeps the connection's receive window open itself. It must be
/// the last handler in the pipeline, after `NIOHTTP2Handler(mode: .client)`.
///
/// Batches wait for the server's first SETTINGS: until then NIOHTTP2 would assume 100 concurrent
/// streams, and APNs allows one before the first authenticated request. Streams beyond the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` then wait in NIOHTTP2's buffer.
final class APNsConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Batch
    typealias OutboundOut = HTTP2Frame

    /// One request: its header block (pseudo-headers first) and its body.
    struct Request: Sendable {
        var headers: HPACKHeaders
        var body: ByteBuffer
    }

    /// Requests to send together, and the promise of their outcomes in the same order.
    struct Batch: Sendable {
        var requests: [Request]
        var promise: EventLoopPromise<[APNsStreams.Outcome]>
    }

    /// The connection takes no more requests (GOAWAY, closed, or its stream ids are spent): nothing of
    /// the batch was sent, and it can go on another connection. `why` is what ended it, when known.
    struct Unusable: Error {
        var why: String?
    }

    /// The receive window the connection is kept at: HTTP/2's initial size.
    static let receiveWindow = 65_535

    private let timeout: TimeAmount
    private var streams = APNsStreams()
    private var promises: [Int: EventLoopPromise<[APNsStreams.Outcome]>] = [:]
    private var timers: [Int: Scheduled<Void>] = [:]
    /// Batches written before the server's first SETTINGS arrived; nil once it has.
    private var waiting: [Batch]? = []
    private var waitingTimer: Scheduled<Void>?
    /// When a frame last arrived: a batch that times out on a connection that is still talking fails
    /// alone; one on a silent connection ends the connection.
    private var lastHeard = NIODeadline.now()
    /// The error that ended the connection, for the requests it leaves unanswered.
    private var closedBy: String?

    /// - Parameter timeout: how long a batch may wait for its last answer.
    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let batch = unwrapOutboundIn(data)
        promise?.succeed()
        guard !batch.requests.isEmpty else { return batch.promise.succeed([]) }
        if waiting != nil, !streams.isClosing {
            waiting?.append(batch)
            if waitingTimer == nil {
                waitingTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
                    // No SETTINGS in all that time: APNs is not speaking HTTP/2 on this connection.
                    closedBy = "APNs sent no HTTP/2 SETTINGS within \(timeout.nanoseconds / 1_000_000_000) s"
                    context.close(promise: nil)
                }
            }
            return
        }
        send(batch, context: context)
    }

    private func send(_ batch: Batch, context: ChannelHandlerContext) {
        guard let (id, ids) = streams.open(batch.requests.count) else {
            batch.promise.fail(Unusable(why: closedBy))
            return closeIfDone(context: context)
        }
        promises[id] = batch.promise
        timers[id] = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            expire(id, context: context)
        }
        for (stream, request) in zip(ids, batch.requests) {
            let streamID = HTTP2StreamID(stream)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: request.headers)))),
                promise: nil)
            // A request whose END_STREAM never left (the connection went away while it waited for a
            // window or a stream slot) fails here, and only that request.
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.assumeIsolated().whenFailure { [self] error in
                complete(streams.notSent(stream, because: "\(error)"))
            }
            let body = HTTP2Frame.FramePayload.Data(data: .byteBuffer(request.body), endStream: true)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(body))), promise: sent)
        }
    }

    /// A batch's time is up: its unanswered streams are reset and fail. The connection is ended too
    /// when nothing at all arrived on it for as long, so that the next batch gets a new one.
    private func expire(_ batch: Int, context: ChannelHandlerContext) {
        let seconds = Int(timeout.nanoseconds / 1_000_000_000)
        let (finished, expired) = streams.expire(batch, seconds: seconds)
        for stream in expired { reset(stream, context: context) }
        context.flush()
        complete(finished)
        if NIODeadline.now() - lastHeard >= timeout {
            closedBy = "APNs sent nothing for \(seconds) s"
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastHeard = .now()
        let stream = Int(frame.streamID)
        switch frame.payload {
        case .headers(let block):
            let fields = block.headers.map { (name: $0.name, value: $0.value) }
            complete(streams.headers(fields, endStream: block.endStream, on: stream))
            if !block.endStream { resetIfEnded(stream, context: context) }
        case .data(let block):
            guard case .byteBuffer(let bytes) = block.data else { return }
            complete(streams.data(bytes, endStream: block.endStream, on: stream))
            if !block.endStream { resetIfEnded(stream, context: context) }
        case .rstStream(let code):
            complete(streams.reset(stream, code: Self.name(code), unprocessed: code == .refusedStream))
        case .goAway(let lastStreamID, let code, _):
            let refused = streams.goAway(lastStreamID: Int(lastStreamID), code: Self.name(code))
            // Streams still in NIOHTTP2's buffer are dropped by their reset, never opened after GOAWAY.
            for stream in refused.streams { reset(stream, context: context) }
            context.flush()
            for finished in refused.finished { complete(finished) }
            failWaiting()
        case .settings(.settings):
            sendWaiting(context: context)
        default:
            break
        }
        closeIfDone(context: context)
    }

    /// Answers refused by ``APNsStreams`` before their END_STREAM (a body too large, say) leave their
    /// stream open at NIOHTTP2: it is reset, so that APNs stops sending on it.
    private func resetIfEnded(_ stream: Int, context: ChannelHandlerContext) {
        guard !streams.isOpen(stream) else { return }
        reset(stream, context: context)
        context.flush()
    }

    private func reset(_ stream: Int, context: ChannelHandlerContext) {
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: HTTP2StreamID(stream), payload: .rstStream(.cancel))), promise: nil)
    }

    private func sendWaiting(context: ChannelHandlerContext) {
        guard let batches = waiting else { return }
        waiting = nil
        waitingTimer?.cancel()
        for batch in batches { send(batch, context: context) }
        context.flush()
    }

    private func failWaiting() {
        let batches = waiting ?? []
        waiting = nil
        waitingTimer?.cancel()
        for batch in batches { batch.promise.fail(Unusable(why: closedBy)) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let window as NIOHTTP2WindowUpdatedEvent:
            // The connection's receive window is reopened once half of it is used.
            if let size = window.inboundWindowSize, size <= Self.receiveWindow / 2, window.streamID == .rootStream {
                context.writeAndFlush(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: .rootStream,
                            payload: .windowUpdate(windowSizeIncrement: Self.receiveWindow - size))),
                    promise: nil)
            }
        case let closed as StreamClosedEvent:
            // A stream NIOHTTP2 ended before its answer was complete (a protocol error, say).
            complete(streams.reset(Int(closed.streamID), code: closed.reason.map(Self.name) ?? "closed"))
            closeIfDone(context: context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2's errors end a stream (its StreamClosedEvent follows) or the connection (its GOAWAY):
        // nothing new goes on this connection, and what it already has may still be answered. Anything
        // else (TLS, the socket) ends the connection now.
        if error is any NIOHTTP2Error {
            streams.drain()
            failWaiting()
            return closeIfDone(context: context)
        }
        closedBy = closedBy ?? "\(error)"
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failWaiting()
        for finished in streams.close(because: closedBy) { complete(finished) }
        context.fireChannelInactive()
    }

    /// A connection that takes nothing new is closed once its last answer is in.
    private func closeIfDone(context: ChannelHandlerContext) {
        if streams.isClosing, streams.open == 0, context.channel.isActive { context.close(promise: nil) }
    }

    private func complete(_ finished: APNsStreams.Finished?) {
        guard let finished, let promise = promises.removeValue(forKey: finished.batch) else { return }
        timers.removeValue(forKey: finished.batch)?.cancel()
        promise.succeed(finished.outcomes)
    }

    /// An HTTP/2 error code by its name in RFC 9113 section 7.
    static func name(_ code: HTTP2ErrorCode) -> String {
        codeNames[code] ?? "0x" + String(code.networkCode, radix: 16)
    }

    private static let codeNames: [HTTP2ErrorCode: String] = [
        .noError: "NO_ERROR", .protocolError: "PROTOCOL_ERROR", .internalError: "INTERNAL_ERROR",
        .flowControlError: "FLOW_CONTROL_ERROR", .settingsTimeout: "SETTINGS_TIMEOUT", .streamClosed: "STREAM_CLOSED",
        .frameSizeError: "FRAME_SIZE_ERROR", .refusedStream: "REFUSED_STREAM", .cancel: "CANCEL",
        .compressionError: "COMPRESSION_ERROR", .connectError: "CONNECT_ERROR", .enhanceYourCalm: "ENHANCE_YOUR_CALM",
        .inadequateSecurity: "INADEQUATE_SECURITY", .http11Required: "HTTP_1_1_REQUIRED",
    ]
}
