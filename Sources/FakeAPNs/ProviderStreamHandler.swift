import Foundation
import HarnessTimeline
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Handles one HTTP/2 stream of the provider API: collects the request, validates it and answers from
/// raw frames. A bodiless `200` goes out as a single HEADERS frame with END_STREAM, which is what
/// aioapns, nghttp and h2load expect (an empty trailing DATA frame confuses aioapns).
final class ProviderStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let endpoint: ProviderEndpoint
    private var headers: [(name: String, value: String)] = []
    private var body = ByteBuffer()

    init(endpoint: ProviderEndpoint) { self.endpoint = endpoint }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            headers = frame.headers.map { (name: $0.name.lowercased(), value: $0.value) }
            if frame.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data { body.writeBuffer(&bytes) }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext) {
        let request = ProviderRequest(headers: headers, body: Data(body.readableBytesView))
        switch endpoint.handle(request) {
        case .success(let notification):
            var headers = HPACKHeaders([(":status", "200"), ("apns-id", notification.apnsId)])
            if endpoint.environment == "sandbox" { headers.add(name: "apns-unique-id", value: UUID().uuidString.lowercased()) }
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        case .failure(let reason):
            var json = #"{"reason":"\#(reason.reason)"}"#
            if let timestamp = reason.timestamp { json = #"{"reason":"\#(reason.reason)","timestamp":\#(timestamp)}"# }
            let headers = HPACKHeaders([
                (":status", "\(reason.status)"), ("apns-id", reason.apnsId), ("content-type", "application/json"),
                ("content-length", "\(json.utf8.count)"),
            ])
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: json)), endStream: true)
            context.writeAndFlush(wrapOutboundOut(.data(data)), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
