import NIOCore
import NIOHTTP1

/// Closes a connection on which no complete request arrived in time: from the moment it opens or its
/// last response ended, until the request's end. A client that trickles a request (slowloris) or opens
/// a connection and says nothing is cut off; a slow download is not, since the clock stops while a
/// response is being sent.
final class RequestTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeout: TimeAmount
    private let onTimeout: @Sendable () -> Void
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { start(context: context) }
        context.write(data, promise: promise)
    }

    private func start(context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        let onTimeout = onTimeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            onTimeout()
            channel.close(promise: nil)
        }
    }
}
