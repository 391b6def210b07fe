import Foundation
import NIOHTTP1
import Recording
import Testing

@testable import MediaServer

/// A `Range` answered from an entry recorded as a whole `200`: a row per rule.
@Suite struct ReplayedRangeTests {
    static let modified = "Tue, 24 Nov 2026 08:00:00 GMT"

    static func entry(_ headers: [(String, String)]) -> HAR.Entry {
        HAR.Entry(
            startedDateTime: "2026-11-24T08:00:00.000Z",
            request: HAR.Request(method: "GET", url: "http://h/p.jpg", httpVersion: "HTTP/1.1", headers: []),
            response: HAR.Response(
                status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
                headers: headers.map { HAR.Header(name: $0.0, value: $0.1) },
                content: HAR.Content(size: 1000, mimeType: "image/jpeg")),
            timings: HAR.Timings(send: 0, wait: 0, receive: 0))
    }

    static let validated = entry([
        ("Content-Type", "image/jpeg"), ("ETag", #""abc""#), ("Last-Modified", modified), ("Content-Length", "1000"),
    ])

    static func decide(_ request: [String: String], entry: HAR.Entry = validated) -> ReplayedRange {
        var recorded = HTTPHeaders()
        for header in entry.response.headers { recorded.add(name: header.name, value: header.value) }
        return ReplayedRange.decide(entry: entry, recorded: recorded, bodySize: 1000) { request[$0] }
    }

    static func headers(_ pairs: [(String, String)]) -> HTTPHeaders { HTTPHeaders(pairs) }

    @Test func oneRangeIsA206WithItsContentRangeAndLength() {
        #expect(
            Self.decide(["range": "bytes=100-199"])
                == .partial(
                    Self.headers([
                        ("Content-Type", "image/jpeg"), ("ETag", #""abc""#), ("Last-Modified", Self.modified),
                        ("Content-Range", "bytes 100-199/1000"), ("Content-Length", "100"),
                    ]), body: [.file(100...199)]))
    }

    @Test func aSuffixAndAnOpenRangeEndAtTheLastByte() {
        guard case .partial(_, let suffix) = Self.decide(["range": "bytes=-10"]),
            case .partial(_, let open) = Self.decide(["range": "bytes=990-"])
        else {
            Issue.record("not partial")
            return
        }
        #expect(suffix == [.file(990...999)])
        #expect(open == [.file(990...999)])
    }

    @Test func twoRangesAreAMultipartBody() {
        guard case .partial(let headers, let body) = Self.decide(["range": "bytes=0-0,-1"]) else {
            Issue.record("not partial")
            return
        }
        #expect(headers.first(name: "content-type") == "multipart/byteranges; boundary=PUSHHARNESS-abc")
        #expect(body.filter { if case .file = $0 { true } else { false } } == [.file(0...0), .file(999...999)])
        #expect(headers.first(name: "content-length") == "\(body.reduce(0) { $0 + $1.count })")
    }

    @Test func aRangePastTheEndIs416WithTheLength() {
        #expect(
            Self.decide(["range": "bytes=1000-"])
                == .unsatisfiable(
                    Self.headers([
                        ("ETag", #""abc""#), ("Last-Modified", Self.modified), ("Content-Range", "bytes */1000"),
                    ])))
    }

    @Test(arguments: [
        (#""abc""#, true), (#"W/"abc""#, false), (#""other""#, false), (modified, true),
        ("Tue, 24 Nov 2026 08:00:01 GMT", false),
    ])
    func anIfRangeHoldsOnlyForTheRecordedStrongTagOrExactDate(_ ifRange: String, _ holds: Bool) {
        let decision = Self.decide(["range": "bytes=0-9", "if-range": ifRange])
        #expect((decision != .whole) == holds, "\(decision)")
    }

    @Test func withoutRecordedValidatorsNoIfRangeHolds() {
        let bare = Self.entry([("Content-Type", "image/jpeg")])
        #expect(Self.decide(["range": "bytes=0-9", "if-range": Self.modified], entry: bare) == .whole)
        #expect(Self.decide(["range": "bytes=0-9", "if-range": #""abc""#], entry: bare) == .whole)
        guard case .partial = Self.decide(["range": "bytes=0-9"], entry: bare) else {
            Issue.record("not partial")
            return
        }
    }

    @Test func otherConditionsWereThoseOfTheRecordedRequest() {
        // The recorded 200 answered them: they are not weighed again.
        guard case .partial = Self.decide(["range": "bytes=0-9", "if-none-match": #""abc""#]) else {
            Issue.record("not partial")
            return
        }
    }

    @Test func a416KeepsNothingThatDescribesTheRecordedBody() {
        let gzipped = Self.entry([("Content-Type", "image/jpeg"), ("Content-Encoding", "gzip"), ("ETag", #""abc""#)])
        guard case .unsatisfiable(let headers) = Self.decide(["range": "bytes=5000-"], entry: gzipped) else {
            Issue.record("not 416")
            return
        }
        #expect(headers.first(name: "content-encoding") == nil && headers.first(name: "content-type") == nil)
        #expect(headers.first(name: "content-range") == "bytes */1000")
    }

    @Test func aMultipartBoundaryIsASCIIAndAPartWithoutATypeIsOctetStream() {
        var odd = Self.entry([("ETag", #""é1ü2""#)])
        odd.response.content.mimeType = ""
        guard case .partial(let headers, let body) = Self.decide(["range": "bytes=0-0,-1"], entry: odd) else {
            Issue.record("not partial")
            return
        }
        #expect(headers.first(name: "content-type") == "multipart/byteranges; boundary=PUSHHARNESS-12")
        guard case .text(let first) = body.first else {
            Issue.record("no part header")
            return
        }
        #expect(first.contains("Content-Type: application/octet-stream\r\n"), "\(first)")
    }

    @Test func aRangeInAnotherUnitIsTheWholeAnswer() {
        #expect(Self.decide(["range": "items=0-9"]) == .whole)
    }
}
