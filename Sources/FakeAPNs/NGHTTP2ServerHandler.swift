import CNGHTTP2
import Foundation
import NIOCore
import NIOHTTP2

/// HTTP/2 for a provider connection on libnghttp2: TLS's plaintext in, each stream's request up to
/// ``ProviderConnectionHandler`` as ``ProviderStreamPart``s; its answers down as
/// ``ProviderOutboundPart``s, nghttp2's bytes out. Frames, HPACK and flow control are nghttp2's;
/// everything above (validation, token rules, delivery, the log) is FakeAPNs's.
///
/// nghttp2 must never be re-entered from one of its callbacks (its programmer's guide): the parts a
/// callback makes are queued and handed up once `mem_recv` or `mem_send` has returned, and a
/// flush asked for meanwhile waits for that too.
///
/// Settings as NIOHTTP2 was given them: `MAX_CONCURRENT_STREAMS` and `MAX_HEADER_LIST_SIZE` sent in
/// the preface; nghttp2 does not enforce the latter, so it is counted here, and a block over it ends
/// the connection (GOAWAY `PROTOCOL_ERROR`), as with NIOHTTP2. HTTP messaging checks are off
/// (`RequestHeaderCheck` above checks header blocks, as with NIOHTTP2's validation disabled), and the
/// receive windows are reopened by nghttp2 itself at half their size.
final class NGHTTP2ServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ProviderStreamPart
    typealias OutboundIn = ProviderOutboundPart
    typealias OutboundOut = ByteBuffer

    /// The session failed (`mem_recv` or `mem_send`), or the connection is ended for a connection error
    /// (a header list over the limit, too many streams, or one nghttp2 found).
    enum SessionError: Error, CustomStringConvertible {
        /// nghttp2 refused what it read or was to send (its error code's words).
        case nghttp2(String)
        /// nghttp2 could not make a session.
        case noSession
        /// An answer for a stream nghttp2 has closed (reset, or timed out before a delayed answer).
        case streamClosed(Int32)
        /// An answer that could not be submitted.
        case notSubmitted(String)
        /// The connection ended for a connection error found in a callback.
        case connectionEnded(String)
        /// nghttp2 sent GOAWAY with an error (its name, and the last error nghttp2 gave, if any).
        case goaway(String, lastError: String?)

        var description: String {
            switch self {
            case .nghttp2(let words): "HTTP/2: \(words)"
            case .noSession: "nghttp2 could not make a session"
            case .streamClosed(let stream): "stream \(stream) is closed"
            case .notSubmitted(let why), .connectionEnded(let why): why
            case .goaway(let name, let lastError): "HTTP/2 \(name)" + (lastError.map { ": \($0)" } ?? "")
            }
        }
    }

    private var session: OpaquePointer?
    private let initialSettings: [HTTP2Setting]
    /// Inside `mem_recv` or `mem_send`: nghttp2 must not be called again.
    private var inSession = false
    /// What the callbacks made, handed on once nghttp2 has returned.
    private var inbound: [ProviderStreamPart] = []
    private var spare: [ProviderStreamPart] = []
    /// The request header block being read (blocks never interleave: CONTINUATION follows at once).
    private var block: NGHTTP2HeaderBlock
    /// The DATA frame being read (its chunks come one after the other), and its stream.
    private var data = Data()
    private var dataStream: Int32 = 0
    /// What the handlers above write, submitted to nghttp2.
    private var outbound = NGHTTP2Outbound()
    /// The promises of frames submitted since the last flush, completed when their bytes are written.
    private var promises: [EventLoopPromise<Void>] = []
    /// A connection error to report once its GOAWAY is out; reported once.
    private var connectionError: SessionError?
    private var reported = false
    /// nghttp2's last error message, for the connection error it ends a connection with.
    private var lastError: String?
    private var closing = false

    // MAX_CONCURRENT_STREAMS as NIOHTTP2 has it: a value is in force once the provider acknowledged the
    // SETTINGS frame that carried it. nghttp2 would refuse streams over a value only sent (REFUSED_STREAM),
    // so it is told no limit in the preface, the frame on the wire says the real one, and the limit in
    // force is enforced here.
    /// The preface's real limit, written over nghttp2's in its first SETTINGS frame.
    private var prefaceLimit: UInt32?
    private var streams = ConcurrentStreamLimit()

    init(initialSettings: [HTTP2Setting], maxHeaderListSize: Int) {
        self.initialSettings = initialSettings
        self.block = NGHTTP2HeaderBlock(limit: maxHeaderListSize)
    }

    // MARK: the channel

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let session { nghttp2_session_del(session) }
        session = nil
        failPromises()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        let bytes = unwrapInboundIn(data)
        inSession = true
        let read = bytes.withUnsafeReadableBytes { raw in
            nghttp2_session_mem_recv(session, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count)
        }
        inSession = false
        if read < 0 {
            fail(SessionError.nghttp2(String(cString: nghttp2_strerror(Int32(read)))), context)
            return
        }
        deliver(context)
        // A connection error's GOAWAY goes out now, and the connection ends.
        if connectionError != nil { send(context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
        // What nghttp2 answers by itself (SETTINGS and PING acknowledgements, window updates, resets).
        send(context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        guard let session else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        // A stream nghttp2 has closed (reset, or timed out before a delayed answer) takes nothing more.
        if let stream = part.stream, nghttp2_session_find_stream(session, stream) == nil {
            promise?.fail(SessionError.streamClosed(stream))
            return
        }
        do {
            if let limit = try outbound.submit(part, to: session) { streams.sent(limit) }
        } catch {
            promise?.fail(SessionError.notSubmitted(error.description))
            return
        }
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {
        send(context)
    }

    // MARK: nghttp2

    private func start(context: ChannelHandlerContext) {
        guard session == nil else { return }
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer {
            nghttp2_session_callbacks_del(callbacks)
            nghttp2_option_del(option)
        }
        nghttp2_option_set_no_http_messaging(option, 1)
        nghttp2_option_set_no_closed_streams(option, 1)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, NGHTTP2Wire.onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, NGHTTP2Wire.onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, NGHTTP2Wire.onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, NGHTTP2Wire.onFrame)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, NGHTTP2Wire.onFrameSent)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, NGHTTP2Wire.onStreamClose)
        nghttp2_session_callbacks_set_error_callback2(callbacks, NGHTTP2Wire.onError)
        var created: OpaquePointer?
        guard
            nghttp2_session_server_new2(&created, callbacks, Unmanaged.passUnretained(self).toOpaque(), option) == 0,
            let created
        else {
            context.fireErrorCaught(SessionError.noSession)
            return
        }
        session = created
        // nghttp2 is told no limit; the frame on the wire says the real one (``send``).
        prefaceLimit = NGHTTP2Wire.limit(in: initialSettings)
        streams.sent(prefaceLimit)
        let told = initialSettings.map { setting in
            setting.parameter == .maxConcurrentStreams
                ? HTTP2Setting(parameter: .maxConcurrentStreams, value: Int(UInt32.max)) : setting
        }
        if let entries = NGHTTP2Wire.entries(told) {
            _ = entries.withUnsafeBufferPointer {
                nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
            }
        }
        send(context)
    }

    /// Everything nghttp2 has to send, in one write, then one flush; the promises of the frames it
    /// holds complete with that write. Ends the connection once nghttp2 wants neither to read nor to
    /// write (after a GOAWAY), when that write is out; a connection error is reported then.
    private func send(_ context: ChannelHandlerContext) {
        guard let session, !inSession else { return }
        let waiting = promises
        promises = []
        guard nghttp2_session_want_write(session) != 0 else {
            for promise in waiting { promise.succeed() }
            endIfDone(session, context, written: nil)
            return
        }
        var out = context.channel.allocator.buffer(capacity: 1024)
        inSession = true
        var failure: Int?
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 {
                failure = count
                break
            }
            guard count > 0, let chunk else { break }
            let start = out.writerIndex
            out.writeBytes(UnsafeRawBufferPointer(start: chunk, count: count))
            if let limit = prefaceLimit {
                prefaceLimit = nil
                NGHTTP2Wire.writeLimit(limit, intoSettingsFrameAt: start, count: count, of: &out)
            }
        }
        inSession = false
        var written: EventLoopFuture<Void>?
        if out.readableBytes > 0 {
            let promise = context.eventLoop.makePromise(of: Void.self)
            for waiter in waiting { promise.futureResult.cascade(to: waiter) }
            context.writeAndFlush(wrapOutboundOut(out), promise: promise)
            written = promise.futureResult
        } else {
            for waiter in waiting { waiter.succeed() }
        }
        deliver(context)
        // What was delivered may have ended the session.
        guard let current = self.session else { return }
        if let failure {
            fail(SessionError.nghttp2(String(cString: nghttp2_strerror(Int32(failure)))), context)
            return
        }
        endIfDone(current, context, written: written)
    }

    /// After a GOAWAY nghttp2 wants neither to read nor to write: the connection ends once `written` is
    /// out, and a connection error is reported (``ProviderConnectionHandler`` says why, and closes).
    private func endIfDone(_ session: OpaquePointer, _ context: ChannelHandlerContext, written: EventLoopFuture<Void>?)
    {
        guard !closing, nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 else {
            return
        }
        closing = true
        let error = connectionError
        let finish = {
            if let error, !self.reported {
                self.reported = true
                context.fireErrorCaught(error)
            }
            context.close(promise: nil)
        }
        guard let written else { return finish() }
        let bound = NIOLoopBound(finish, eventLoop: context.eventLoop)
        written.whenComplete { _ in bound.value() }
    }

    /// Hands on what the callbacks queued: each stream's parts up the pipeline, in order.
    private func deliver(_ context: ChannelHandlerContext) {
        while !inbound.isEmpty {
            // The two lists take turns, so that neither is allocated again for every read.
            var batch: [ProviderStreamPart] = []
            swap(&batch, &spare)
            swap(&batch, &inbound)
            defer {
                batch.removeAll(keepingCapacity: true)
                spare = batch
            }
            for part in batch { context.fireChannelRead(wrapInboundOut(part)) }
        }
    }

    private func fail(_ error: SessionError, _ context: ChannelHandlerContext) {
        if let session { nghttp2_session_del(session) }
        session = nil
        failPromises()
        guard !reported else { return }
        reported = true
        context.fireErrorCaught(error)
    }

    private func failPromises() {
        let unfinished = promises
        promises = []
        for promise in unfinished { promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Ends the connection with GOAWAY `PROTOCOL_ERROR` from inside a callback: nghttp2 stops reading.
    private func endConnection(_ why: String, lastStream: Int32) {
        if connectionError == nil { connectionError = SessionError.connectionEnded(why) }
        if let session { nghttp2_session_terminate_session2(session, lastStream, NGHTTP2_PROTOCOL_ERROR.rawValue) }
    }

    // MARK: what the callbacks do, on the handler

    /// False when the stream goes over the limit in force: the connection ends, as NIOHTTP2 ends it.
    func beginRequest(stream: Int32) -> Bool {
        guard streams.open(stream) else {
            endConnection(
                "a provider opened more streams than SETTINGS_MAX_CONCURRENT_STREAMS (\(streams.inForce))",
                lastStream: streams.lastAccepted)
            return false
        }
        block.begin(stream: stream)
        return true
    }

    func beginTrailers(stream: Int32) {
        block.begin(stream: stream)
    }

    /// False when the block goes over the header list limit: the connection ends.
    func header(stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard block.add(stream: stream, name: name, value: value) == .overLimit else {
            return true
        }
        endConnection(
            "a request's header list is over \(block.limit) bytes (SETTINGS_MAX_HEADER_LIST_SIZE)",
            lastStream: streams.lastAccepted)
        return false
    }

    func dataChunk(stream: Int32, _ chunk: UnsafeRawBufferPointer) {
        // Chunks of another stream's frame: the one before was never completed (its stream ended).
        if stream != dataStream {
            data = Data()
            dataStream = stream
        }
        guard let base = chunk.baseAddress, !chunk.isEmpty else { return }
        data.append(base.assumingMemoryBound(to: UInt8.self), count: chunk.count)
    }

    func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let header = frame.pointee.hd
        let stream = header.stream_id
        let end = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard let fields = block.finish(stream: stream) else { return }
            inbound.append(.headers(fields: fields, stream: stream, end: end))
        case NGHTTP2_DATA.rawValue:
            let body = stream == dataStream ? data : Data()
            data = Data()
            dataStream = 0
            inbound.append(.data(body, stream: stream, end: end))
        case NGHTTP2_SETTINGS.rawValue:
            // The provider acknowledged our oldest SETTINGS frame not yet acknowledged: its limit holds.
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { streams.acknowledged() }
        default:
            // PING, GOAWAY, WINDOW_UPDATE and PRIORITY are nghttp2's to act on; a RST_STREAM closes its
            // stream, which comes as a closed part.
            break
        }
    }

    func frameSent(_ frame: UnsafePointer<nghttp2_frame>) {
        // A GOAWAY with an error that nghttp2 sent for a connection error it found itself.
        guard UInt32(frame.pointee.hd.type) == NGHTTP2_GOAWAY.rawValue, frame.pointee.goaway.error_code != 0,
            connectionError == nil
        else { return }
        let name = String(cString: nghttp2_http2_strerror(frame.pointee.goaway.error_code))
        connectionError = SessionError.goaway(name, lastError: lastError)
    }

    func errorReported(_ message: String) {
        lastError = message
    }

    func streamClosed(_ stream: Int32, code: UInt32) {
        streams.closed(stream)
        block.end(stream: stream)
        outbound.closed(stream)
        inbound.append(.closed(stream: stream))
    }

    /// Copies up to `length` bytes of `stream`'s body into `buffer`; the end of the body ends the stream.
    func readBody(stream: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: inout UInt32)
        -> Int
    {
        outbound.readBody(stream: stream, into: buffer, length: length, flags: &flags)
    }

    /// Calls `body` with the handler a callback's `user_data` names, without retaining it: the handler
    /// holds the session whose callback this is, and outlives the call.
    static func with<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (NGHTTP2ServerHandler) -> Result) -> Result {
        Unmanaged<NGHTTP2ServerHandler>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }
}
