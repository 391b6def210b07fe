import Foundation
import Testing

@testable import MediaServer

/// RFC 9110 §13.2.2: the preconditions in their order, then If-Range and Range.
@Suite struct ConditionalRequestTests {
    static let modified = Date(timeIntervalSince1970: 784_111_777.25)  // Sun, 06 Nov 1994 08:49:37.25 GMT
    static let validators = ResourceValidators(etag: #""abc123""#, lastModified: modified, length: 1000)
    static let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let earlier = "Sun, 06 Nov 1994 08:49:36 GMT"

    func answer(get: Bool = true, _ headers: [String: String]) -> MediaAnswer {
        MediaAnswer.decide(isGet: get, validators: Self.validators) { headers[$0] }
    }

    @Test func ifMatchComparesStrongly() {
        #expect(answer(["if-match": #""abc123""#]) == .full)
        #expect(answer(["if-match": #""x", "abc123""#]) == .full)
        #expect(answer(["if-match": "*"]) == .full)
        #expect(answer(["if-match": #"W/"abc123""#]) == .preconditionFailed)
        #expect(answer(["if-match": #""other""#]) == .preconditionFailed)
    }

    @Test func ifUnmodifiedSinceCountsOnlyWithoutIfMatch() {
        #expect(answer(["if-unmodified-since": Self.lastModified]) == .full)
        #expect(answer(["if-unmodified-since": Self.earlier]) == .preconditionFailed)
        #expect(answer(["if-unmodified-since": Self.earlier, "if-match": #""abc123""#]) == .full)
        #expect(answer(["if-unmodified-since": "not a date"]) == .full)
    }

    @Test func ifNoneMatchComparesWeaklyAndGives304() {
        #expect(answer(["if-none-match": #""abc123""#]) == .notModified)
        #expect(answer(["if-none-match": #"W/"abc123""#]) == .notModified)
        #expect(answer(["if-none-match": "*"]) == .notModified)
        #expect(answer(["if-none-match": #""other""#]) == .full)
        #expect(answer(get: false, ["if-none-match": #""abc123""#]) == .notModified)
    }

    @Test func ifModifiedSinceCountsOnlyWithoutIfNoneMatch() {
        #expect(answer(["if-modified-since": Self.lastModified]) == .notModified)
        #expect(answer(["if-modified-since": Self.earlier]) == .full)
        #expect(answer(["if-modified-since": Self.lastModified, "if-none-match": #""other""#]) == .full)
        #expect(answer(["if-modified-since": "Sunday, 06-Nov-94 08:49:37 GMT"]) == .notModified)
        #expect(answer(["if-modified-since": "Sun Nov  6 08:49:37 1994"]) == .notModified)
    }

    @Test func preconditionsComeBeforeTheRange() {
        #expect(answer(["if-match": #""other""#, "range": "bytes=0-9"]) == .preconditionFailed)
        #expect(answer(["if-none-match": #""abc123""#, "range": "bytes=0-9"]) == .notModified)
        #expect(answer(["range": "bytes=5000-"]) == .rangeNotSatisfiable)
    }

    @Test func ifRangeHoldsOnlyForTheCurrentStrongTagOrTheExactDate() {
        #expect(answer(["range": "bytes=0-9", "if-range": #""abc123""#]) == .partial(0...9))
        #expect(answer(["range": "bytes=0-9", "if-range": #""old""#]) == .full)
        #expect(answer(["range": "bytes=0-9", "if-range": #"W/"abc123""#]) == .full)
        #expect(answer(["range": "bytes=0-9", "if-range": Self.lastModified]) == .partial(0...9))
        #expect(answer(["range": "bytes=0-9", "if-range": Self.earlier]) == .full)
        #expect(answer(["range": "bytes=0-9", "if-range": "garbage"]) == .full)
    }

    @Test func headIgnoresRange() {
        #expect(answer(get: false, ["range": "bytes=0-9"]) == .full)
    }
}

@Suite struct HTTPDateTests {
    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }

    @Test func readsTheThreeFormatsOfRFC9110() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
    }

    @Test(arguments: [
        "", "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
    ])
    func refusesAnythingElse(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func roundTrips() {
        for seconds in stride(from: 0, to: 4_000_000_000, by: 97_654_321) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        }
    }
}
