import Foundation
import HTTPServiceSupport
import NIOCore
import NIOSSL
import Recording

/// Serves one provider connection from the stream parts ``NGHTTP2ServerHandler`` hands up: collects
/// each stream's request, lets the endpoint decide, and answers on the same stream.
///
/// Streams are not given channels of their own: a push is a single small request and a one-frame
/// answer, and a channel and pipeline per stream cost more than everything FakeAPNs does for the push.
/// nghttp2 keeps the receive windows open itself. A bodiless `200` goes out as one HEADERS frame with
/// END_STREAM, which is what aioapns, nghttp and h2load expect (an empty trailing DATA frame confuses
/// aioapns).
final class ProviderConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ProviderStreamPart
    typealias OutboundOut = ProviderOutboundPart

    /// Request bodies beyond this are not kept in memory (APNs allows 5 KB); the rest is read and
    /// dropped, and the validator still sees that the payload is too large.
    static let maximumBodySize = 64 * 1024

    private struct PendingRequest {
        var headers: [(name: String, value: String)] = []
        var body = Data()

        /// Keeps the body's bytes up to ``maximumBodySize``; beyond, they are read and dropped. A body
        /// that comes in one DATA frame, as a push's does, is kept as the frame's own bytes.
        mutating func append(_ bytes: Data) {
            guard body.count + bytes.count <= ProviderConnectionHandler.maximumBodySize else { return }
            if body.isEmpty {
                body = bytes
            } else {
                body.append(bytes)
            }
        }
    }

    private let endpoint: ProviderEndpoint
    private let connection: ProviderConnection
    /// Records each exchange into a cassette, when the server records.
    private let recorder: CassetteRecorder?
    /// The connection's id in the cassette, taken at its first request.
    private var recordedConnection: String?
    private var pending: [Int32: PendingRequest] = [:]
    /// The last request header block that was well-formed: the next one's equal fields are not checked
    /// again (``RequestHeaderCheck``).
    private var checkedFields: [(name: String, value: String)] = []
    /// Answers written during this read, flushed together when it completes.
    private var flushPending = false

    init(endpoint: ProviderEndpoint, connection: ProviderConnection, recorder: CassetteRecorder? = nil) {
        self.endpoint = endpoint
        self.connection = connection
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let fields, let stream, let end):
            // A second block on a stream is its trailers.
            let trailers = pending[stream] != nil
            if let problem = RequestHeaderCheck.problem(fields, trailers: trailers, checked: checkedFields) {
                reset(stream, because: problem, context: context)
                return
            }
            if !trailers { checkedFields = fields }
            if !trailers, end {
                // A request with no body (a GET, say) is answered without being kept.
                respond(PendingRequest(headers: fields), on: stream, context: context)
            } else if trailers {
                pending[stream]!.headers.append(contentsOf: fields)
                if end, let request = pending.removeValue(forKey: stream) {
                    respond(request, on: stream, context: context)
                }
            } else {
                pending[stream] = PendingRequest(headers: fields)
            }
        case .data(let bytes, let stream, let end):
            if end {
                guard var request = pending.removeValue(forKey: stream) else { return }
                request.append(bytes)
                respond(request, on: stream, context: context)
            } else {
                pending[stream]?.append(bytes)
            }
        case .closed(let stream):
            // Most streams close answered, with nothing pending on the connection: no key to hash.
            if !pending.isEmpty { pending[stream] = nil }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if flushPending {
            flushPending = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream's error was answered with RST_STREAM by nghttp2 and ends only that stream (it comes
        // as a closed part); an error here (a protocol error, already answered with GOAWAY, or TLS)
        // ends the connection.
        endpoint.timeline.publish(
            .apnsConnectionClosed, source: "apns",
            ["client": context.remoteAddress?.description ?? "-", "why": "\(error)"])
        context.close(promise: nil)
    }

    /// Ends a stream whose request is malformed with RST_STREAM PROTOCOL_ERROR (RFC 9113 section 8.1.1);
    /// the connection goes on.
    private func reset(_ stream: Int32, because problem: String, context: ChannelHandlerContext) {
        pending[stream] = nil
        endpoint.malformed(problem, stream: stream)
        write(.reset(stream: stream), context: context)
    }

    private func respond(_ received: PendingRequest, on stream: Int32, context: ChannelHandlerContext) {
        let request = ProviderRequest(headers: received.headers, body: received.body)
        let recording = record(request, on: stream, channel: context.channel)
        if connection.credential == nil { connection.credential = Self.credential(of: context.channel) }
        let answer = endpoint.handle(request, connection: connection)
        raiseConcurrentStreamsIfAuthenticated(context: context)
        guard answer.delay > .zero else {
            write(answer, on: stream, context: context, recording: recording)
            return
        }
        let bound = NIOLoopBound((self, context, recording), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: TimeAmount(answer.delay)) {
            let (handler, context, recording) = bound.value
            handler.write(answer, on: stream, context: context, recording: recording)
            handler.flushPending = false
            context.flush()
        }
    }

    /// Starts the record of an exchange, when the server records: the request as it came, pseudo-headers
    /// in the method and URL, the payload as its text.
    private func record(_ request: ProviderRequest, on stream: Int32, channel: any Channel) -> ExchangeRecording? {
        guard let recorder else { return nil }
        let local = channel.localAddress
        if recordedConnection == nil { recordedConnection = recorder.connectionID() }
        func pseudo(_ name: String) -> String? { request.headers.first { $0.name == name }?.value }
        // A request without `:authority` (HTTP/2 allows it) is named by the address it came to.
        let authority =
            pseudo(":authority").flatMap { $0.isEmpty ? nil : $0 }
            ?? local.flatMap { address in address.ipAddress.map { "\($0):\(address.port ?? 0)" } } ?? "localhost"
        let recording = recorder.exchange(
            service: "apns", link: "provider→apns", connection: recordedConnection, method: pseudo(":method") ?? "",
            url: "\(pseudo(":scheme") ?? "https")://\(authority)\(pseudo(":path") ?? "/")", httpVersion: "HTTP/2",
            headers: request.headers.filter { !$0.name.hasPrefix(":") },
            requestBody: request.body.isEmpty ? nil : String(decoding: request.body, as: UTF8.self),
            requestMimeType: request.headers.first { $0.name == "content-type" }?.value ?? "application/json")
        recording.stream(Int(stream))
        return recording
    }

    private func write(
        _ answer: ProviderEndpoint.Answer, on stream: Int32, context: ChannelHandlerContext,
        recording: ExchangeRecording?
    ) {
        defer { recording?.finish() }
        switch answer.refusal {
        case nil:
            var fields: [(name: String, value: String)] = []
            fields.reserveCapacity(3)
            fields.append((":status", "200"))
            fields.append(("apns-id", answer.apnsId))
            if connection.environment == "sandbox" {
                fields.append(("apns-unique-id", connection.messageIds.make(lowercase: true)))
            }
            recording?.head(status: 200, statusText: "OK", headers: fields.dropFirst().map { ($0.name, $0.value) })
            write(.head(fields: fields, stream: stream, end: true), context: context)
        case let reason?:
            let json = Data(reason.json.utf8)
            let fields: [(name: String, value: String)] = [
                (":status", "\(reason.status)"), ("content-type", "application/json"),
                ("content-length", "\(json.count)"), ("apns-id", answer.apnsId),
            ]
            recording?.head(
                status: reason.status, statusText: reason.reason,
                headers: fields.dropFirst().map { ($0.name, $0.value) })
            recording?.write(json)
            write(.head(fields: fields, stream: stream, end: false), context: context)
            write(.body(json, stream: stream), context: context)
        }
    }

    private func write(_ part: ProviderOutboundPart, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(part), promise: nil)
        flushPending = true
    }

    /// Reads the TLS client certificate the connection presented, if any.
    private static func credential(of channel: any Channel) -> ProviderCredential {
        guard let tls = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
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
        guard authenticated, !connection.streamsRaised else { return }
        connection.streamsRaised = true
        write(.maxConcurrentStreams(UInt32(FakeAPNsServer.authenticatedConcurrentStreams)), context: context)
    }
}
