import Foundation
import NIOHTTP1
import Recording

/// A GET with a `Range`, answered from an entry recorded as a whole `200` (``Playback/Answer/cut(_:)``):
/// by the media server's own rules (``MediaAnswer``), with the recorded `ETag` and `Last-Modified` as
/// the validators an `If-Range` is weighed against. Only `Range` and `If-Range` are weighed: every other
/// condition was part of the recorded request, and the recorded `200` is its answer. Pure: the server
/// carries it out.
enum ReplayedRange: Equatable {
    /// The whole entry, as recorded: the range is not satisfiable as asked (an `If-Range` that does not
    /// hold, a `Range` that is not bytes).
    case whole
    /// `416`, with these headers (a `Content-Range` of `bytes */length`).
    case unsatisfiable(HTTPHeaders)
    /// `206`: these headers (its `Content-Length` the segments' total), and a body of these segments of
    /// the recorded body.
    case partial(HTTPHeaders, body: [BodySegment])

    /// - Parameters:
    ///   - recorded: the headers the whole answer would go out with (``ReplayedHeaders``).
    ///   - bodySize: the length of the recorded body.
    ///   - header: the request's header value by lowercase name.
    static func decide(
        entry: HAR.Entry, recorded: HTTPHeaders, bodySize: Int, header: (String) -> String?
    ) -> ReplayedRange {
        let etag = entry.responseHeader("etag").flatMap { EntityTagList($0).tags.first }.flatMap {
            $0.weak ? nil : $0.quoted
        }
        let validators = ResourceValidators(
            etag: etag, lastModified: entry.responseHeader("last-modified").flatMap(HTTPDate.parse), length: bodySize)
        let answer = MediaAnswer.decide(isGet: true, validators: validators) { name in
            name == "range" || name == "if-range" ? header(name) : nil
        }
        var headers = recorded
        for name in ["Content-Length", "Transfer-Encoding", "Content-Range"] { headers.remove(name: name) }
        let recordedType = entry.responseHeader("content-type") ?? entry.response.content.mimeType
        let contentType = recordedType.isEmpty ? "application/octet-stream" : recordedType
        let body: [BodySegment]
        switch answer {
        case .full, .notModified, .preconditionFailed:
            return .whole
        case .rangeNotSatisfiable:
            // Its body is a line of text of its own: nothing that describes the recorded body stays.
            for name in ["Content-Type", "Content-Encoding"] { headers.remove(name: name) }
            headers.add(name: "Content-Range", value: "bytes */\(bodySize)")
            return .unsatisfiable(headers)
        case .partial(let bytes):
            headers.add(name: "Content-Range", value: "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(bodySize)")
            body = [.file(bytes)]
        case .multiple(let ranges):
            let boundary =
                "PUSHHARNESS-"
                + String((etag ?? "replayed").filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(40))
            headers.replaceOrAdd(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
            body = BodySegment.multipart(ranges, boundary: boundary, contentType: contentType, length: bodySize)
        }
        headers.add(name: "Content-Length", value: "\(body.reduce(0) { $0 + $1.count })")
        return .partial(headers, body: body)
    }
}
