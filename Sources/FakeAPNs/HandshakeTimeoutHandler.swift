import HTTPServiceSupport
import NIOCore
import NIOTLS

/// Closes a provider connection whose TLS handshake has not finished within `timeout` of its opening:
/// a client that sends half a ClientHello, or nothing, would otherwise hold a descriptor until the idle
/// timeout (an hour). Sits right after `NIOSSLServerHandler` (whose events it watches) and leaves the
/// pipeline once the handshake is done.
final class HandshakeTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var deadline: ConnectionDeadline

    init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) {
        deadline = ConnectionDeadline(timeout: timeout, onTimeout: onTimeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline.cancel()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case .handshakeCompleted? = event as? TLSUserEvent {
            deadline.cancel()
            // After passing the event on: a removed handler's context forwards nothing more.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func start(context: ChannelHandlerContext) {
        if !deadline.isRunning { deadline.restart(context: context) }
    }
}
