import HTTPServiceSupport
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

    private var deadline: ConnectionDeadline

    init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) {
        deadline = ConnectionDeadline(timeout: timeout, onTimeout: onTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadline.restart(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        deadline.restart(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { deadline.cancel() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { deadline.restart(context: context) }
        context.write(data, promise: promise)
    }
}
