import Foundation
import NIOCore
import NIOHTTP1
import Recording

extension MediaServer {
    /// A `Range` request answered from a whole recorded `200` (``ReplayedRange``): `206` with the ranges,
    /// or `416`, at once. Nil when the whole entry is the answer after all (an `If-Range` that does not
    /// hold): the caller serves it as recorded.
    func answerRange(
        _ request: HTTPRequestHead, from index: Int, of cassette: Cassette, file: BodyFile?,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws -> ConnectionEnding? {
        let entry = cassette.har.log.entries[index]
        let body = cassette.body(of: index)
        let bodySize = Self.size(of: body)
        let recorded = ReplayedHeaders.make(
            for: entry, bodySize: bodySize, keepAlive: request.isKeepAlive, head: false, date: dateHeader.format(Date())
        )
        let decision = ReplayedRange.decide(entry: entry, recorded: recorded, bodySize: bodySize) {
            request.headers.first(name: $0)
        }
        switch decision {
        case .whole:
            return nil
        case .unsatisfiable(let headers):
            let (parts, bodyBytes) = shortReply(request, status: .rangeNotSatisfiable, headers: headers)
            exchange.status = 416
            exchange.bodyBytes = bodyBytes
            exchange.recording?.record(parts)
            try await outbound.write(contentsOf: parts)
            return headers.first(name: "connection")?.lowercased() == "close" ? .closeAfterResponse : .keepAlive
        case .partial(let headers, let segments):
            let source: any BodySource
            switch body {
            case .inline(let data): source = DataBodySource(data)
            case .file:
                // Opened and checked before this was decided.
                guard let file else { return .close }
                source = CassetteBodySource(file)
            }
            exchange.status = 206
            publishRequest(request, path: request.path, status: .partialContent)
            var batch = ResponseBatch(outbound: outbound)
            batch.append(
                .head(HTTPResponseHead(version: request.version, status: .partialContent, headers: headers)), bytes: 0)
            exchange.recording?.head(status: 206, statusText: "Partial Content", headers: Array(headers))
            for segment in segments {
                switch segment {
                case .text(let text):
                    let buffer = ByteBuffer(string: text)
                    exchange.recording?.write(buffer)
                    try await batch.add(.body(.byteBuffer(buffer)), bytes: buffer.readableBytes)
                    exchange.bodyBytes += buffer.readableBytes
                case .file(let bytes):
                    var offset = bytes.lowerBound
                    while offset <= bytes.upperBound {
                        let chunk = try await source.read(
                            from: offset, count: min(64 * 1024, bytes.upperBound + 1 - offset),
                            end: bytes.upperBound + 1)
                        // A body file that came up short after it was checked: never promise bytes that will not come.
                        guard chunk.readableBytes > 0 else {
                            try await batch.flush()
                            return .close
                        }
                        exchange.recording?.write(chunk)
                        try await batch.add(.body(.byteBuffer(chunk)), bytes: chunk.readableBytes)
                        offset += chunk.readableBytes
                        exchange.bodyBytes += chunk.readableBytes
                    }
                }
            }
            batch.append(.end(nil), bytes: 0)
            try await batch.flush()
            publishFinished(path: request.path, bytes: exchange.bodyBytes)
            let closes = headers.first(name: "connection")?.lowercased() == "close"
            return closes ? .closeAfterResponse : .keepAlive
        }
    }
}
