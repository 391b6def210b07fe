import Foundation
import NIOCore
import NIOHTTP1

/// Answers, on the connection's event loop, the requests that need no waiting: no fault rule in
/// force, no throttle or delay, and a body of at most ``maximumBody`` bytes read in one go. Everything
/// else goes on to the connection's task. Each hop between the event loop and that task cost more
/// than serving a small file; HTTPServerPipelineHandler, before this handler, keeps pipelined
/// answers in order whichever way they take.
final class QuickResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let maximumBody = 256 * 1024

    private enum State {
        case idle
        /// Answering this request here once its end arrives.
        case answering(HTTPRequestHead, MediaReply)
        /// Passing this request on.
        case forwarding
    }

    private let server: MediaServer
    private let client: String
    private var state = State.idle

    init(server: MediaServer, client: String) {
        self.server = server
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.idle, .head(let request)):
            if let reply = quickReply(to: request) {
                state = .answering(request, reply)
            } else {
                state = .forwarding
                context.fireChannelRead(data)
            }
        case (.answering(let request, let reply), .end):
            state = .idle
            answer(request, with: reply, context: context)
        case (.answering, _):
            break  // a request body, which a GET or HEAD does not use
        case (.forwarding, .end):
            state = .idle
            context.fireChannelRead(data)
        default:
            context.fireChannelRead(data)
        }
    }

    /// The reply, when this request can be answered here.
    private func quickReply(to request: HTTPRequestHead) -> MediaReply? {
        guard server.answersEverythingAtOnce else { return nil }
        let reply = server.reply(to: request, path: request.path, alterations: ReplyAlterations())
        switch reply {
        case .short:
            return reply
        case .file(_, _, let body, _, let length, _):
            guard body.count <= 1, length <= Self.maximumBody else { return nil }
            return reply
        case .closeAtOnce:
            return nil
        }
    }

    private func answer(_ request: HTTPRequestHead, with reply: MediaReply, context: ChannelHandlerContext) {
        var exchange = Exchange(request: request, client: client)
        var parts: [HTTPServerResponsePart]
        switch reply {
        case .short(let status, let headers):
            let short = server.shortReply(request, status: status, headers: headers)
            parts = short.parts
            exchange.status = Int(status.code)
            exchange.bodyBytes = short.bodyBytes
        case .file(let status, let headers, let body, let resource, _, _):
            server.publishRequest(request, path: request.path, status: status)
            exchange.status = Int(status.code)
            parts = [.head(HTTPResponseHead(version: request.version, status: status, headers: headers))]
            if request.method == .GET, case .file(let range)? = body.first {
                guard let bytes = Self.read(range, of: resource, allocator: context.channel.allocator) else {
                    // The file went away between the stat and the read: say so as a broken response.
                    context.close(promise: nil)
                    return
                }
                parts.append(.body(.byteBuffer(bytes)))
                exchange.bodyBytes = bytes.readableBytes
            }
            parts.append(.end(nil))
            server.publishFinished(path: request.path, bytes: exchange.bodyBytes)
        case .closeAtOnce:
            return
        }
        for part in parts.dropLast() { context.write(wrapOutboundOut(part), promise: nil) }
        let keepAlive = request.isKeepAlive
        let log = server.accessLog
        let done = context.writeAndFlush(wrapOutboundOut(parts.last!))
        log?.record(exchange)
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    private static func read(_ range: ClosedRange<Int>, of resource: MediaResource, allocator: ByteBufferAllocator)
        -> ByteBuffer?
    {
        let descriptor = open(resource.url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let buffer = try? FileBodySource.pread(
            descriptor, at: range.lowerBound, length: range.count, allocator: allocator)
        return buffer?.readableBytes == range.count ? buffer : nil
    }
}
