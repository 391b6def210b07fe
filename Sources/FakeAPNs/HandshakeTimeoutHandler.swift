import NIOCore
import NIOTLS

/// Closes a provider connection whose TLS handshake has not finished within `timeout` of its opening:
/// a client that sends half a ClientHello, or nothing, would otherwise hold a descriptor until the idle
/// timeout (an hour). Sits right after `NIOSSLServerHandler` (whose events it watches) and leaves the
/// pipeline once the handshake is done.
final class HandshakeTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

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
        timer = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case .handshakeCompleted? = event as? TLSUserEvent {
            timer?.cancel()
            timer = nil
            // After passing the event on: a removed handler's context forwards nothing more.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    private func start(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        let channel = context.channel
        let onTimeout = onTimeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            onTimeout()
            channel.close(mode: .all, promise: nil)
        }
    }
}
