import Foundation
import NIOHTTP1
import Testing

@testable import MediaServer

/// The media server's reply, decided without a socket or a disk: a row per rule and per fault.
@Suite struct MediaReplyTests {
    static let resource = MediaResource(
        url: URL(fileURLWithPath: "/srv/photos/dailyphoto.jpg"), length: 1000,
        modified: Date(timeIntervalSince1970: 1_700_000_000))
    static let etag = "\"0123456789abcdef\""

    func request(
        _ method: HTTPMethod = .GET, _ uri: String = "/photos/dailyphoto.jpg", _ headers: [(String, String)] = []
    ) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(headers))
    }

    func reply(
        _ request: HTTPRequestHead, faults: [MediaFault] = [], resource: MediaResource? = resource,
        maxHeaderFields: Int = 100
    ) -> MediaReply {
        let alterations = ReplyAlterations(faults)
        if let early = MediaReply.early(
            to: request, maxHeaderFields: maxHeaderFields, alterations: alterations, headers: HTTPHeaders())
        {
            return early
        }
        return MediaReply.decide(
            to: request, resource: resource, etag: Self.etag, lastModified: "Tue, 14 Nov 2023 22:13:20 GMT",
            alterations: alterations, headers: HTTPHeaders())
    }

    func cut(_ kind: MediaFault.Kind, bytes: Int? = nil, fraction: Double? = nil) -> MediaFault {
        var fault = MediaFault(kind)
        fault.afterBytes = bytes
        fault.afterFraction = fraction
        return fault
    }

    @Test func requestsThatAreNotGetOrHeadAreRefusedNamingTheMethodsThereAre() {
        guard case .short(let status, let headers) = reply(request(.POST)) else {
            Issue.record("not a short reply")
            return
        }
        #expect(status == .methodNotAllowed)
        #expect(headers["Allow"] == ["GET, HEAD"])
    }

    @Test func aLongTargetAndTooManyFieldsAreRefusedBeforeAnyFault() {
        let long = request(.GET, "/" + String(repeating: "a", count: MediaReply.longestTarget))
        #expect(reply(long, faults: [MediaFault(.closeBeforeHeaders)]).status == .uriTooLong)
        let crowded = request(.GET, "/photos/dailyphoto.jpg", (0..<5).map { ("X-\($0)", "1") })
        #expect(reply(crowded, maxHeaderFields: 4).status == .badRequest)
        #expect(!MediaReply.considersFaults(long, maxHeaderFields: 100))
        #expect(!MediaReply.considersFaults(crowded, maxHeaderFields: 4))
        #expect(MediaReply.considersFaults(request(), maxHeaderFields: 100))
    }

    @Test func faultsThatReplaceTheReplyComeBeforeTheFile() {
        #expect(reply(request(), faults: [MediaFault(.closeBeforeHeaders)], resource: nil) == .closeAtOnce)
        var status = MediaFault(.status)
        status.status = 503
        status.retryAfter = 2
        guard case .short(let code, let headers) = reply(request(), faults: [status], resource: nil) else {
            Issue.record("not a short reply")
            return
        }
        #expect(code == .serviceUnavailable)
        #expect(headers["Retry-After"] == ["2"])
    }

    @Test func noFileIs404() {
        #expect(reply(request(), resource: nil).status == .notFound)
    }

    @Test func theWholeFileWithItsValidatorsAndLength() throws {
        let file = try #require(reply(request()).file)
        #expect(file.status == .ok)
        #expect(file.headers["Accept-Ranges"] == ["bytes"])
        #expect(file.headers["ETag"] == [Self.etag])
        #expect(file.headers["Content-Length"] == ["1000"])
        #expect(file.headers["Content-Type"] == ["image/jpeg"])
        #expect(file.body == [.file(0...999)])
        #expect(file.frame == BodyFrame(declaredLength: 1000, limit: 1000))
    }

    @Test func aRangeIs206AndIfNoneMatchIs304() throws {
        let partial = try #require(reply(request(.GET, "/p", [("Range", "bytes=100-199")])).file)
        #expect(partial.status == .partialContent)
        #expect(partial.headers["Content-Range"] == ["bytes 100-199/1000"])
        #expect(partial.frame.limit == 100)
        #expect(reply(request(.GET, "/p", [("If-None-Match", Self.etag)])).status == .notModified)
        #expect(reply(request(.GET, "/p", [("Range", "bytes=5000-")])).status == .rangeNotSatisfiable)
    }

    @Test func severalRangesAreOneMultipartBody() throws {
        let multiple = try #require(reply(request(.GET, "/p", [("Range", "bytes=0-9,20-29")])).file)
        #expect(multiple.headers["Content-Type"].first?.hasPrefix("multipart/byteranges; boundary=") == true)
        #expect(multiple.body.filter { if case .file = $0 { true } else { false } } == [.file(0...9), .file(20...29)])
    }

    @Test func ignoreRangeAnswersTheWholeFileWithoutAcceptRanges() throws {
        let file = try #require(
            reply(request(.GET, "/p", [("Range", "bytes=100-")]), faults: [MediaFault(.ignoreRange)]).file)
        #expect(file.status == .ok)
        #expect(file.headers["Accept-Ranges"].isEmpty)
    }

    @Test func noAcceptRangesStillHonoursTheRange() throws {
        let faults = [MediaFault(.noAcceptRanges)]
        let file = try #require(reply(request(.GET, "/p", [("Range", "bytes=100-")]), faults: faults).file)
        #expect(file.status == .partialContent)
        #expect(file.headers["Accept-Ranges"].isEmpty)
    }

    @Test func noContentLengthLeavesTheLengthOut() throws {
        let file = try #require(reply(request(), faults: [MediaFault(.noContentLength)]).file)
        #expect(file.headers["Content-Length"].isEmpty)
        #expect(file.frame == BodyFrame(declaredLength: nil, limit: 1000))
    }

    @Test(arguments: [
        (MediaFault.Kind.fin, ConnectionEnding.close), (.reset, .reset), (.stall, .stall),
    ])
    func aCutStopsTheBodyAndEndsTheConnectionItsWay(kind: MediaFault.Kind, ending: ConnectionEnding) throws {
        let byBytes = try #require(reply(request(), faults: [cut(kind, bytes: 300)]).file)
        #expect(byBytes.frame == BodyFrame(declaredLength: 1000, limit: 300, ending: ending))
        let byFraction = try #require(reply(request(), faults: [cut(kind, fraction: 0.25)]).file)
        #expect(byFraction.frame == BodyFrame(declaredLength: 1000, limit: 250, ending: ending))
    }

    @Test func aCutAtOrPastTheEndLeavesTheBodyWhole() throws {
        let file = try #require(reply(request(), faults: [cut(.reset, bytes: 1000)]).file)
        #expect(file.frame == BodyFrame(declaredLength: 1000, limit: 1000))
    }

    @Test func aLyingLengthSendsWhatItClaimsOrAllAndCloses() throws {
        var shorter = MediaFault(.lyingContentLength)
        shorter.by = -400
        let short = try #require(reply(request(), faults: [shorter]).file)
        #expect(short.headers["Content-Length"] == ["600"])
        #expect(short.frame == BodyFrame(declaredLength: 600, limit: 600))
        var longer = MediaFault(.lyingContentLength)
        longer.by = 50
        let long = try #require(reply(request(), faults: [longer]).file)
        #expect(long.headers["Content-Length"] == ["1050"])
        #expect(long.frame == BodyFrame(declaredLength: 1050, limit: 1000, closeAfter: true))
    }

    @Test func changeETagAsksForANewVersionAndEveryKindSaysWhetherItEndsTheResponse() {
        #expect(ReplyAlterations([MediaFault(.changeETag)]).newVersion)
        #expect(!ReplyAlterations().newVersion)
        let ending = MediaFault.Kind.allCases.filter { !$0.onlyChangesHeaders }
        #expect(Set(ending) == [.fin, .reset, .stall, .closeBeforeHeaders, .lyingContentLength, .status])
    }
}

extension MediaReply {
    var status: HTTPResponseStatus? {
        switch self {
        case .short(let status, _), .file(let status, _, _, _, _, _): status
        case .closeAtOnce: nil
        }
    }

    var file: (status: HTTPResponseStatus, headers: HTTPHeaders, body: [BodySegment], frame: BodyFrame)? {
        guard case .file(let status, let headers, let body, _, _, let frame) = self else { return nil }
        return (status, headers, body, frame)
    }
}
