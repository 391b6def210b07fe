import HarnessTimeline
import NIOCore
import NIOSSL

/// Serves one connection to the legacy binary gateway: reads commands as they arrive
/// (``LegacyFrameReader`` decides), hands each notification to the provider API's rules, and never
/// answers one it takes. The first notification it refuses, or bytes that are no command, get the
/// error response and the connection is closed; whatever came after is dropped unread, as Apple drops
/// it.
final class LegacyGatewayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Fired into the pipeline when the server shuts down: the connection gets status 10 with the last
    /// notification it took, then closes.
    struct ShutdownEvent {}

    private let endpoint: ProviderEndpoint
    private let connection: ProviderConnection
    /// Bytes of a command not yet complete; at most one frame's worth (``LegacyFrameReader/largestFrame``).
    private var pending: [UInt8] = []
    /// Set once the error response is written: nothing more is read.
    private var ended = false
    /// The identifier of the last notification taken, for the shutdown response.
    private var lastTaken: UInt32 = 0

    init(endpoint: ProviderEndpoint, environment: String) {
        self.endpoint = endpoint
        connection = ProviderConnection(environment: environment)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ended else { return }
        let bytes = unwrapInboundIn(data)
        pending.append(contentsOf: bytes.readableBytesView)
        if connection.credential == nil, let certificate = Self.certificate(of: context.channel) {
            connection.credential = .certificate(certificate)
        }
        guard case .certificate = connection.credential else {
            // The handshake asked for a certificate from FakeAPNs's CA; one that is not a push certificate
            // (no bundle id, no environment) cannot send.
            return refuse(LegacyErrorResponse(status: .missingTopic, identifier: 0), context: context)
        }
        var used = 0
        reading: while !ended {
            switch LegacyFrameReader.next(pending[used...]) {
            case .needMore:
                break reading
            case .refused(let response):
                return refuse(response, context: context)
            case .notification(let notification, let length):
                used += length
                let status = endpoint.handleLegacy(notification, connection: connection)
                if let status {
                    return refuse(
                        LegacyErrorResponse(status: status, identifier: notification.identifier), context: context)
                }
                lastTaken = notification.identifier
            }
        }
        pending.removeFirst(used)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ShutdownEvent {
            refuse(LegacyErrorResponse(status: .shutdown, identifier: lastTaken), context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !ended, !pending.isEmpty {
            endpoint.timeline.publish(
                .apnsLegacyTruncated, source: "apns",
                ["client": context.remoteAddress?.description ?? "-", "bytes": "\(pending.count)"])
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        endpoint.timeline.publish(
            .apnsConnectionClosed, source: "apns",
            ["client": context.remoteAddress?.description ?? "-", "why": "\(error)"])
        context.close(promise: nil)
    }

    /// Writes the error response and closes the connection once it is out.
    private func refuse(_ response: LegacyErrorResponse, context: ChannelHandlerContext) {
        guard !ended else { return }
        ended = true
        pending = []
        endpoint.timeline.publish(
            .apnsLegacyRefused, source: "apns",
            [
                "status": "\(response.status.rawValue)", "name": response.status.name,
                "identifier": "\(response.identifier)",
            ])
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: response.bytes))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// The push certificate the client presented in the handshake, read as APNs reads it.
    private static func certificate(of channel: any Channel) -> ProviderCertificate? {
        guard let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
            let der = try? tls.peerCertificate?.toDERBytes()
        else { return nil }
        return ProviderCertificate(derEncoded: der)
    }
}
