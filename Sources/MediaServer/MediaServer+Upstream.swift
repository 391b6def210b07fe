import AsyncHTTPClient
import Foundation
import HarnessTimeline
import NIOCore
import NIOHTTP1
import Recording

/// The media server as a reverse proxy: a request is forwarded to the upstream as it came (but for the
/// connection's own headers), and the answer streamed back chunk by chunk, recorded as it goes when the
/// server records. An upstream that cannot be reached gets a 502 saying why, never a hang.
extension MediaServer {
    /// Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and `Host`.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host",
        "proxy-authorization", "proxy-authenticate",
    ]

    func forward(
        _ request: HTTPRequestHead, to upstream: MediaUpstream,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        var outgoing = HTTPClientRequest(url: upstream.url + request.uri)
        outgoing.method = .init(rawValue: request.method.rawValue)
        for header in request.headers where !Self.hopByHop.contains(header.name.lowercased()) {
            outgoing.headers.add(name: header.name, value: header.value)
        }
        let response: HTTPClientResponse
        do {
            guard let client = upstreamClient else { throw MediaServerError.noUpstream }
            response = try await client.execute(outgoing, timeout: TimeAmount(upstream.timeout))
        } catch {
            return try await answerUpstreamFailed(
                request, upstream: upstream, error: error, outbound: outbound, exchange: &exchange)
        }
        var headers = HTTPHeaders()
        for header in response.headers where !Self.hopByHop.contains(header.name.lowercased()) {
            headers.add(name: header.name, value: header.value)
        }
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        let status = HTTPResponseStatus(
            statusCode: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        exchange.status = Int(status.code)
        publishRequest(request, path: request.path, status: status)
        exchange.recording?.head(status: Int(status.code), statusText: status.reasonPhrase, headers: Array(headers))
        var batch = ResponseBatch(outbound: outbound)
        batch.append(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)), bytes: 0)
        try await batch.flush()
        for try await chunk in response.body {
            exchange.recording?.write(chunk)
            exchange.bodyBytes += chunk.readableBytes
            try await outbound.write(.body(.byteBuffer(chunk)))
        }
        try await outbound.write(.end(nil))
        publishFinished(path: request.path, bytes: exchange.bodyBytes)
        return request.isKeepAlive ? .keepAlive : .closeAfterResponse
    }

    private func answerUpstreamFailed(
        _ request: HTTPRequestHead, upstream: MediaUpstream, error: any Error,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        let reason = "\(upstream.url) could not be reached: \(error)"
        let status = HTTPResponseStatus.badGateway
        var headers = serverHeaders()
        headers.add(
            name: MediaUpstream.errorHeader, value: String(reason.prefix(200)).replacingOccurrences(of: "\n", with: " ")
        )
        let parts = shortReply(request, status: status, headers: headers).parts
        exchange.status = Int(status.code)
        exchange.recording = nil  // nothing came from upstream: nothing to record
        try await outbound.write(contentsOf: parts)
        return .closeAfterResponse
    }
}
