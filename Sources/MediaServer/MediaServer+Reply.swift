import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// What the media server answers a request: decided from the request, the faults that apply and the
/// file, before any byte is written.
extension MediaServer {
    /// How a response leaves its connection.
    enum Ending {
        case keepAlive
        /// The response is complete; close the connection after it.
        case closeAfterResponse
        /// FIN once the response (or the part of it the fault allows) is out.
        case close
        /// RST once the client has acknowledged what was sent.
        case reset
        /// Open, silent, until the client or the server gives up.
        case stall
    }

    /// What a request gets, decided at once from the request, the file and the fault in force.
    enum Reply {
        /// A status with a one-line text body (errors, 304, 412, 416).
        case short(HTTPResponseStatus, HTTPHeaders)
        /// Close before any header.
        case closeAtOnce
        /// The file or parts of it; `limit` is where a fault stops the body.
        case file(
            HTTPResponseStatus, HTTPHeaders, body: [BodySegment], resource: MediaResource, length: Int, limit: Int,
            ending: Ending, closeAfter: Bool)
    }

    /// The longest request target served: Apache's default `LimitRequestLine` is 8190 bytes.
    static let longestTarget = 8190

    /// Decides a request's reply. `faults` are the rules that apply to it (already counted).
    func reply(to request: HTTPRequestHead, path: String, faults: AppliedFaults) -> Reply {
        let fault = faults.ending
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "Apache/2.2.26 (Unix) PushHarness")
        headers.add(name: "Date", value: dateHeader.format(Date()))
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            return .short(.methodNotAllowed, headers)
        }
        guard request.uri.utf8.count <= Self.longestTarget else { return .short(.uriTooLong, headers) }
        guard request.headers.count <= configuration.limits.maxHeaderFields else { return .short(.badRequest, headers) }
        switch fault?.fault {
        case .closeBeforeHeaders?:
            return .closeAtOnce
        case .status?:
            if let retryAfter = fault?.retryAfter { headers.add(name: "Retry-After", value: "\(retryAfter)") }
            return .short(HTTPResponseStatus(statusCode: fault?.status ?? 503), headers)
        default:
            break
        }
        let generation = generations.withLock { $0[path] ?? 0 }
        guard let resource = resolver.resource(at: path, generation: generation) else {
            return .short(.notFound, headers)
        }
        let rangesSupported = !faults.contains(.ignoreRange)
        if rangesSupported, !faults.contains(.noAcceptRanges) { headers.add(name: "Accept-Ranges", value: "bytes") }
        let (etag, lastModified) = validatorCache.validators(of: resource)
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Last-Modified", value: lastModified)
        let validators = ResourceValidators(etag: etag, lastModified: resource.modified, length: resource.length)
        let answer = MediaAnswer.decide(isGet: request.method == .GET, validators: validators) { name in
            if !rangesSupported, name == "range" || name == "if-range" { return nil }
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
        // What the body may carry before the fault stops it, and how the connection then ends.
        var limit = length
        var ending = Ending.keepAlive
        var closeAfter = false
        // Without a length the body is framed as chunked: the size is unknown to the client.
        let declaresLength = !faults.contains(.noContentLength)
        switch fault?.fault {
        case .fin?, .reset?, .stall?:
            // A cut at or past the end leaves the body whole: nothing to cut.
            limit = fault!.cutOffset(in: length)
            if limit < length { ending = fault!.fault == .fin ? .close : fault!.fault == .reset ? .reset : .stall }
            if declaresLength { headers.add(name: "Content-Length", value: "\(length)") }
        case .lyingContentLength?:
            let declared = fault!.declaredLength(of: length)
            headers.add(name: "Content-Length", value: "\(declared)")
            // Claiming less sends only that much, so the connection stays usable; claiming more sends
            // everything and closes (after the response, so FIN), leaving the client short.
            if declared < length { limit = declared } else { closeAfter = true }
        default:
            if declaresLength { headers.add(name: "Content-Length", value: "\(length)") }
        }
        return .file(
            status, headers, body: body, resource: resource, length: length, limit: limit, ending: ending,
            closeAfter: closeAfter)
    }
}
