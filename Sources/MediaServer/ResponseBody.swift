import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

extension HTTPRequestHead {
    /// The path, without the query.
    var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }
}

/// One piece of a response body: literal text (a multipart boundary and part headers) or bytes of
/// the file.
enum BodySegment: Equatable {
    case text(String)
    case file(ClosedRange<Int>)

    var count: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .file(let bytes): bytes.count
        }
    }

    /// A `multipart/byteranges` body (RFC 9110 §14.6): each range with its own `Content-Type` and
    /// `Content-Range`, then the closing boundary.
    static func multipart(_ ranges: [ClosedRange<Int>], boundary: String, contentType: String, length: Int)
        -> [BodySegment]
    {
        var segments: [BodySegment] = []
        for (index, range) in ranges.enumerated() {
            segments.append(
                .text(
                    (index == 0 ? "" : "\r\n") + "--\(boundary)\r\nContent-Type: \(contentType)\r\n"
                        + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(length)\r\n\r\n"))
            segments.append(.file(range))
        }
        segments.append(.text("\r\n--\(boundary)--\r\n"))
        return segments
    }
}

/// Response parts waiting to be handed to the channel together.
struct ResponseBatch {
    /// Flushed once this much body is waiting, so a large file streams rather than piling up.
    static let limit = 256 * 1024
    let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    private var parts: [HTTPServerResponsePart] = []
    private var bytes = 0

    init(outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) { self.outbound = outbound }

    mutating func append(_ part: HTTPServerResponsePart, bytes: Int) {
        parts.append(part)
        self.bytes += bytes
    }

    mutating func add(_ part: HTTPServerResponsePart, bytes: Int) async throws {
        append(part, bytes: bytes)
        if self.bytes >= Self.limit { try await flush() }
    }

    mutating func flush() async throws {
        guard !parts.isEmpty else { return }
        let ready = parts
        parts.removeAll(keepingCapacity: true)
        bytes = 0
        try await outbound.write(contentsOf: ready)
    }
}
