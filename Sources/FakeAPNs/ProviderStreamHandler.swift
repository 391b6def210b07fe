import Foundation
import HarnessTimeline
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

/// Handles one HTTP/2 stream of the provider API: collects the request, lets the endpoint decide, and
/// answers from raw frames. A bodiless `200` goes out as a single HEADERS frame with END_STREAM, which
/// is what aioapns, nghttp and h2load expect (an empty trailing DATA frame confuses aioapns).
final class ProviderStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// Requests larger than this are not read into memory; APNs allows 5 KB.
    static let maximumBodySize = 64 * 1024

    private let endpoint: ProviderEndpoint
    private let connection: ProviderConnection
    private var headers: [(name: String, value: String)] = []
    private var body = ByteBuffer()
    private var answered = false

    init(endpoint: ProviderEndpoint, connection: ProviderConnection) {
        self.endpoint = endpoint
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            headers.append(contentsOf: frame.headers.map { (name: $0.name.lowercased(), value: $0.value) })
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data, body.readableBytes + bytes.readableBytes <= Self.maximumBodySize {
                body.writeBuffer(&bytes)
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let request = ProviderRequest(headers: headers, body: Data(body.readableBytesView))
        if connection.credential == nil { connection.credential = Self.credential(of: context.channel) }
        let answer = endpoint.handle(request, connection: connection)
        raiseConcurrentStreamsIfAuthenticated(context: context)
        guard answer.delay > .zero else {
            write(answer, context: context)
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: answer.delay.timeAmount) {
            let (handler, context) = bound.value
            handler.write(answer, context: context)
        }
    }

    private func write(_ answer: ProviderEndpoint.Answer, context: ChannelHandlerContext) {
        switch answer.outcome {
        case .success:
            var headers = HPACKHeaders([(":status", "200"), ("apns-id", answer.apnsId)])
            if connection.environment == "sandbox" {
                headers.add(name: "apns-unique-id", value: UUID().uuidString.lowercased())
            }
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        case .failure(let reason):
            let json = reason.json
            let headers = HPACKHeaders([
                (":status", "\(reason.status)"), ("apns-id", answer.apnsId), ("content-type", "application/json"),
                ("content-length", "\(json.utf8.count)"),
            ])
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: json)), endStream: true)
            context.writeAndFlush(wrapOutboundOut(.data(data)), promise: nil)
        }
    }

    /// Reads the TLS client certificate the connection presented, if any.
    private static func credential(of stream: any Channel) -> ProviderCredential {
        guard let tls = try? stream.parent?.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
            let peer = tls.peerCertificate
        else { return .token }
        guard let der = try? peer.toDERBytes(), let certificate = ProviderCertificate(derEncoded: der) else {
            return .unusableCertificate
        }
        return .certificate(certificate)
    }

    /// "APNs allows only one stream until you post a request with a valid authentication token."
    private func raiseConcurrentStreamsIfAuthenticated(context: ChannelHandlerContext) {
        let authenticated: Bool
        switch connection.credential {
        case .certificate: authenticated = true
        default: authenticated = connection.state.isAuthenticated
        }
        guard authenticated, !connection.streamsRaised, let parent = context.channel.parent else {
            return
        }
        connection.streamsRaised = true
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: FakeAPNsServer.authenticatedConcurrentStreams)])))
        parent.writeAndFlush(settings, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
