import Foundation
import HarnessTimeline
import NIOCore
import NIOSSL
import Recording

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
    /// Records each notification as an exchange, when the server records.
    private let recorder: CassetteRecorder?
    /// The connection's id in the cassette, taken at its first notification.
    private var recordedConnection: String?
    /// Bytes of a command not yet complete; at most one frame's worth (``LegacyFrameReader/largestFrame``).
    private var pending: [UInt8] = []
    /// Set once the error response is written: nothing more is read.
    private var ended = false
    /// The identifier of the last notification taken, for the shutdown response.
    private var lastTaken: UInt32 = 0

    init(endpoint: ProviderEndpoint, environment: String, recorder: CassetteRecorder? = nil) {
        self.endpoint = endpoint
        self.recorder = recorder
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
                let recording = record(notification, channel: context.channel)
                let status = endpoint.handleLegacy(notification, connection: connection)
                Self.answer(recording, status: status)
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
    /// Starts the record of a notification as the HTTP/2 request it stands for (its token in the path,
    /// its expiry and priority as headers, its payload as the body), with its identifier, on the
    /// `provider→apns` link.
    private func record(_ notification: LegacyFrameReader.Notification, channel: any Channel) -> ExchangeRecording? {
        guard let recorder else { return nil }
        if recordedConnection == nil { recordedConnection = recorder.connectionID() }
        let request = ProviderEndpoint.legacyRequest(notification)
        let path = request.headers.first { $0.name == ":path" }?.value ?? "/"
        let authority =
            channel.localAddress.flatMap { address in address.ipAddress.map { "\($0):\(address.port ?? 0)" } }
            ?? "localhost"
        return recorder.exchange(
            service: "apns", link: "provider→apns", connection: recordedConnection, method: "POST",
            url: "apns-legacy://\(authority)\(path)", httpVersion: "APNs legacy binary",
            headers: request.headers.filter { !$0.name.hasPrefix(":") } + [
                (name: "x-legacy-identifier", value: "\(notification.identifier)")
            ],
            requestBody: String(decoding: request.body, as: UTF8.self), requestMimeType: "application/json")
    }

    /// The gateway's answer to a recorded notification: `200` when it was taken (the gateway answers
    /// nothing), else the status of the error response it got, by its number.
    private static func answer(_ recording: ExchangeRecording?, status: LegacyStatus?) {
        guard let recording else { return }
        if let status {
            recording.head(
                status: 400, statusText: "legacy status \(status.rawValue)",
                headers: [(name: "x-legacy-status", value: "\(status.rawValue)")])
        } else {
            recording.head(status: 200, statusText: "OK", headers: [])
        }
        recording.finish()
    }

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
