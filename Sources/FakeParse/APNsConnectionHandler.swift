import NIOCore
import NIOHPACK
import NIOHTTP2

/// The provider's end of one HTTP/2 connection to APNs, driven with raw frames: a batch of requests
/// written at once and flushed once, and its promise completed when APNs has answered every request in
/// it. Which stream is which request, and what an answer is, ``APNsStreams`` decides.
///
/// Streams get no channels of their own (NIOHTTP2's multiplexer), for the reason FakeAPNs's server
/// handler gives: a push is one small request and a one-frame answer, and a channel per stream costs
/// more than the push. So this handler keeps the receive windows open itself. It must be the last
/// handler in the pipeline, after `NIOHTTP2Handler(mode: .client)`. Streams beyond the peer's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` (APNs allows one before the first authenticated request) wait in
/// NIOHTTP2's buffer.
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
    /// the batch was sent, and it can go on another connection.
    struct Unusable: Error {}

    /// The receive window the connection and each stream are kept at: HTTP/2's initial size.
    static let receiveWindow = 65_535

    private let timeout: TimeAmount
    private var streams = APNsStreams()
    private var promises: [Int: EventLoopPromise<[APNsStreams.Outcome]>] = [:]
    private var timers: [Int: Scheduled<Void>] = [:]
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
        guard let (id, ids) = streams.open(batch.requests.count) else {
            batch.promise.fail(Unusable())
            return closeIfDone(context: context)
        }
        promises[id] = batch.promise
        let loop = context.eventLoop.assumeIsolated()
        timers[id] = loop.scheduleTask(in: timeout) { [self] in
            let (finished, expired) = streams.expire(id, seconds: Int(timeout.nanoseconds / 1_000_000_000))
            for stream in expired {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: HTTP2StreamID(stream), payload: .rstStream(.cancel))),
                    promise: nil)
            }
            context.flush()
            complete(finished)
            // APNs that leaves a batch unanswered this long is not answering: the next batch gets a new
            // connection, and the requests still open on this one fail with it.
            closedBy = "an earlier batch was not answered within \(timeout.nanoseconds / 1_000_000_000) s"
            context.close(promise: nil)
        }
        for (stream, request) in zip(ids, batch.requests) {
            let streamID = HTTP2StreamID(stream)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: request.headers)))),
                promise: nil)
            // A request that cannot go (a header NIOHTTP2 refuses, say) fails here, and only that request.
            let sent = context.eventLoop.makePromise(of: Void.self)
            sent.futureResult.assumeIsolated().whenFailure { [self] error in
                complete(streams.notSent(stream, because: "\(error)"))
            }
            let body = HTTP2Frame.FramePayload.Data(data: .byteBuffer(request.body), endStream: true)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(body))), promise: sent)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let stream = Int(frame.streamID)
        switch frame.payload {
        case .headers(let block):
            let fields = block.headers.map { (name: $0.name, value: $0.value) }
            complete(streams.headers(fields, endStream: block.endStream, on: stream))
        case .data(let block):
            guard case .byteBuffer(let bytes) = block.data else { return }
            complete(streams.data(bytes, endStream: block.endStream, on: stream))
        case .rstStream(let code):
            complete(streams.reset(stream, code: Self.name(code)))
        case .goAway(let lastStreamID, let code, _):
            for finished in streams.goAway(lastStreamID: Int(lastStreamID), code: Self.name(code)) {
                complete(finished)
            }
        default:
            break
        }
        closeIfDone(context: context)
    }

    /// A connection that takes nothing new is closed once its last answer is in.
    private func closeIfDone(context: ChannelHandlerContext) {
        if streams.isClosing, streams.open == 0, context.channel.isActive { context.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let window as NIOHTTP2WindowUpdatedEvent:
            // A receive window is reopened once half of it is used: the connection's always.
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
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error ends only its stream (StreamClosedEvent says which); anything else ends the connection.
        if error is NIOHTTP2Errors.StreamError { return }
        closedBy = closedBy ?? "\(error)"
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        for finished in streams.close(because: closedBy) { complete(finished) }
        context.fireChannelInactive()
    }

    private func complete(_ finished: APNsStreams.Finished?) {
        guard let finished, let promise = promises.removeValue(forKey: finished.batch) else { return }
        timers.removeValue(forKey: finished.batch)?.cancel()
        promise.succeed(finished.outcomes)
    }

    /// An HTTP/2 error code by its name in RFC 9113 section 7.
    static func name(_ code: HTTP2ErrorCode) -> String {
        let names: [HTTP2ErrorCode: String] = [
            .noError: "NO_ERROR", .protocolError: "PROTOCOL_ERROR", .internalError: "INTERNAL_ERROR",
            .flowControlError: "FLOW_CONTROL_ERROR", .settingsTimeout: "SETTINGS_TIMEOUT",
            .streamClosed: "STREAM_CLOSED", .frameSizeError: "FRAME_SIZE_ERROR", .refusedStream: "REFUSED_STREAM",
            .cancel: "CANCEL", .compressionError: "COMPRESSION_ERROR", .connectError: "CONNECT_ERROR",
            .enhanceYourCalm: "ENHANCE_YOUR_CALM", .inadequateSecurity: "INADEQUATE_SECURITY",
            .http11Required: "HTTP_1_1_REQUIRED",
        ]
        return names[code] ?? "0x" + String(code.networkCode, radix: 16)
    }
}
