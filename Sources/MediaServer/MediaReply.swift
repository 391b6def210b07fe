import Foundation
import NIOHTTP1

/// What the media server answers a request, decided before any byte is written, from the request, the
/// file and what the faults in force change (``ReplyAlterations``). Pure: ``MediaServer`` looks the file
/// up and carries the reply out.
enum MediaReply: Equatable {
    /// A status with a one-line text body (errors, 304, 412, 416).
    case short(HTTPResponseStatus, HTTPHeaders)
    /// Close before any header.
    case closeAtOnce
    /// The file or parts of it, `length` bytes in all, going out as `frame` says.
    case file(
        HTTPResponseStatus, HTTPHeaders, body: [BodySegment], resource: MediaResource, length: Int, frame: BodyFrame)

    /// The longest request target served: Apache's default `LimitRequestLine` is 8190 bytes.
    static let longestTarget = 8190

    /// Whether fault rules are tried on the request at all: a method other than GET and HEAD, a target
    /// longer than any rule considers or too many header fields are refused before (405, 414, 400).
    static func considersFaults(_ request: HTTPRequestHead, maxHeaderFields: Int) -> Bool {
        (request.method == .GET || request.method == .HEAD) && request.uri.utf8.count <= longestTarget
            && request.headers.count <= maxHeaderFields
    }

    /// The reply when it is decided before the file is looked at: a request refused as such, or a fault
    /// that replaces the reply; nil to go on to the file. `headers` are the reply's so far.
    static func early(
        to request: HTTPRequestHead, maxHeaderFields: Int, alterations: ReplyAlterations, headers: HTTPHeaders
    ) -> MediaReply? {
        var headers = headers
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            return .short(.methodNotAllowed, headers)
        }
        guard request.uri.utf8.count <= longestTarget else { return .short(.uriTooLong, headers) }
        guard request.headers.count <= maxHeaderFields else { return .short(.badRequest, headers) }
        switch alterations.replacement {
        case .closeBeforeHeaders?:
            return .closeAtOnce
        case .status(let status, let retryAfter)?:
            if let retryAfter { headers.add(name: "Retry-After", value: "\(retryAfter)") }
            return .short(HTTPResponseStatus(statusCode: status), headers)
        case nil:
            return nil
        }
    }

    /// The reply for the file at the request's path (nil: there is none), with its validators.
    static func decide(
        to request: HTTPRequestHead, resource: MediaResource?, etag: String, lastModified: String,
        alterations: ReplyAlterations, headers: HTTPHeaders
    ) -> MediaReply {
        var headers = headers
        guard let resource else { return .short(.notFound, headers) }
        if alterations.advertisesRanges { headers.add(name: "Accept-Ranges", value: "bytes") }
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Last-Modified", value: lastModified)
        let validators = ResourceValidators(etag: etag, lastModified: resource.modified, length: resource.length)
        let answer = MediaAnswer.decide(isGet: request.method == .GET, validators: validators) { name in
            if !alterations.honoursRanges, name == "range" || name == "if-range" { return nil }
            return request.headers.first(name: name)
        }
        let status: HTTPResponseStatus
        let body: [BodySegment]
        switch answer {
        case .notModified:
            return .short(.notModified, headers)
        case .preconditionFailed:
            return .short(.preconditionFailed, headers)
        case .rangeNotSatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(resource.length)")
            return .short(.rangeNotSatisfiable, headers)
        case .full:
            status = .ok
            headers.add(name: "Content-Type", value: resource.contentType)
            body = resource.length > 0 ? [.file(0...(resource.length - 1))] : []
        case .partial(let bytes):
            status = .partialContent
            headers.add(name: "Content-Type", value: resource.contentType)
            headers.add(
                name: "Content-Range", value: "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(resource.length)")
            body = [.file(bytes)]
        case .multiple(let ranges):
            status = .partialContent
            let boundary = "PUSHHARNESS-\(etag.filter(\.isHexDigit))"
            headers.add(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
            body = BodySegment.multipart(
                ranges, boundary: boundary, contentType: resource.contentType, length: resource.length)
        }
        let length = body.reduce(0) { $0 + $1.count }
        let frame = alterations.frame(length: length)
        if let declared = frame.declaredLength { headers.add(name: "Content-Length", value: "\(declared)") }
        return .file(status, headers, body: body, resource: resource, length: length, frame: frame)
    }
}
