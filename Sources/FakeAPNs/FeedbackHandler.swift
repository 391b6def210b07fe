import HarnessTimeline
import NIOCore
import NIOSSL
import NIOTLS

/// Serves one connection to the feedback service: once the TLS handshake has named the push
/// certificate, writes the tuples of the removed apps on its topics (``DeviceGateway/takeFeedback``)
/// and closes. The client sends nothing; whatever it sends is ignored.
final class FeedbackHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gateway: DeviceGateway
    private let environment: String
    private let timeline: Timeline

    init(gateway: DeviceGateway, environment: String, timeline: Timeline) {
        self.gateway = gateway
        self.environment = environment
        self.timeline = timeline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is LegacyGatewayHandler.ShutdownEvent { return context.close(promise: nil) }
        guard case TLSUserEvent.handshakeCompleted = event else {
            return context.fireUserInboundEventTriggered(event)
        }
        let client = context.remoteAddress?.description ?? "-"
        guard let tls = try? context.channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
            let der = try? tls.peerCertificate?.toDERBytes(), let certificate = ProviderCertificate(derEncoded: der)
        else {
            timeline.publish(
                .apnsConnectionClosed, source: "apns",
                ["client": client, "why": "the feedback service needs a push certificate"])
            return context.close(promise: nil)
        }
        let listed = gateway.takeFeedback(topics: certificate.topics, environment: environment)
        var bytes = ByteBuffer()
        for entry in listed {
            if let tuple = FeedbackTuple.bytes(token: entry.token, removedAt: entry.removedAt) {
                bytes.writeBytes(tuple)
            }
        }
        timeline.publish(
            .apnsFeedbackRead, source: "apns",
            [
                "topic": certificate.bundleId, "tokens": listed.map(\.token).joined(separator: ","),
                "count": "\(listed.count)",
            ])
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timeline.publish(
            .apnsConnectionClosed, source: "apns",
            ["client": context.remoteAddress?.description ?? "-", "why": "\(error)"])
        context.close(promise: nil)
    }
}
