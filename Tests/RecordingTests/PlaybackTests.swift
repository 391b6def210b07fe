import Foundation
import Recording
import Testing

/// Which recorded answer a request gets, row by row.
struct PlaybackTests {
    static func entry(_ method: String, _ url: String, _ headers: [(String, String)] = [], status: Int = 200)
        -> HAR.Entry
    {
        HAR.Entry(
            startedDateTime: "2026-11-24T08:00:00.000Z",
            request: HAR.Request(
                method: method, url: url, httpVersion: "HTTP/1.1",
                headers: headers.map { HAR.Header(name: $0.0, value: $0.1) }),
            response: HAR.Response(
                status: status, statusText: "", httpVersion: "HTTP/1.1", headers: [],
                content: HAR.Content(size: 0, mimeType: "")),
            timings: HAR.Timings(send: 0, wait: 0, receive: 0))
    }

    static let entries = [
        entry("GET", "http://127.0.0.1:44447/photos/p.jpg"),
        entry("GET", "http://127.0.0.1:44447/photos/p.jpg", [("Range", "bytes=1000-")]),
        entry("GET", "http://127.0.0.1:44447/photos/p.jpg"),
        entry("HEAD", "http://other.example:8080/photos/p.jpg"),
        entry("GET", "http://h/search?b=2&a=1"),
        entry("GET", "http://h/failed", status: 0),
    ]

    @Test func eachRecordedAnswerPlaysInOrderThenTheLastRepeats() {
        var playback = Playback(entries: Self.entries)
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: []) == .entry(0))
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: []) == .entry(2))
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: []) == .entry(2))
    }

    @Test func theHeadersThatChangeTheAnswerMustAgree() {
        var playback = Playback(entries: Self.entries)
        #expect(
            playback.answer(method: "GET", target: "/photos/p.jpg", headers: [("range", "bytes=1000-")]) == .entry(1))
        #expect(
            playback.answer(method: "GET", target: "/photos/p.jpg", headers: [("If-None-Match", #""x""#)])
                == .notRecorded(nearest: "GET /photos/p.jpg"))
        // Headers that do not change the answer are not compared.
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: [("User-Agent", "x")]) == .entry(0))
    }

    @Test func aRangeNothingRecordedAnswersIsCutFromTheWholeAnswer() {
        var playback = Playback(entries: Self.entries)
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: [("Range", "bytes=5-")]) == .cut(0))
        #expect(
            playback.answer(
                method: "GET", target: "/photos/p.jpg", headers: [("Range", "bytes=5-"), ("If-Range", "x")])
                == .cut(0))
        // The recorded range still answers itself; a HEAD is never cut; another path is not recorded.
        #expect(
            playback.answer(method: "GET", target: "/photos/p.jpg", headers: [("range", "bytes=1000-")]) == .entry(1))
        #expect(playback.answer(method: "HEAD", target: "/photos/p.jpg", headers: [("Range", "bytes=5-")]) == .entry(3))
        #expect(
            playback.answer(method: "GET", target: "/photos/q.jpg", headers: [("Range", "bytes=5-")])
                == .notRecorded(nearest: "GET /photos/p.jpg"))
    }

    @Test func onlyAWholeAnswerIsCut() {
        var faulted = Self.entry("GET", "http://h/a")
        faulted.fault = HAR.Fault(kind: "disconnect", atByte: 0, how: "FIN")
        var altered = Self.entry("GET", "http://h/b")
        altered.applied = [["fault": "noRanges"]]
        let notFound = Self.entry("GET", "http://h/c", status: 404)
        var playback = Playback(entries: [faulted, altered, notFound])
        for path in ["/a", "/b", "/c"] {
            guard case .notRecorded = playback.answer(method: "GET", target: path, headers: [("Range", "bytes=0-9")])
            else {
                Issue.record("\(path) was answered")
                return
            }
        }
        // A HAR saved without bodies has nothing to cut from: not recorded, not an empty body.
        var bodiless = Self.entry("GET", "http://h/d")
        bodiless.response.content.size = 5000
        var withoutBodies = Playback(entries: [bodiless])
        guard case .notRecorded = withoutBodies.answer(method: "GET", target: "/d", headers: [("Range", "bytes=0-9")])
        else {
            Issue.record("a body that was not saved was cut")
            return
        }
        // Matching that does not compare Range finds the whole answer, and it is still cut.
        var matching = RequestMatching()
        matching.headers = []
        var loose = Playback(entries: [Self.entry("GET", "http://h/p")], matching: matching)
        #expect(loose.answer(method: "GET", target: "/p", headers: [("Range", "bytes=0-9")]) == .cut(0))
    }

    @Test func hostsAreMappedOntoTheServerAndQueriesCompareInAnyOrder() {
        var playback = Playback(entries: Self.entries)
        #expect(playback.answer(method: "HEAD", target: "/photos/p.jpg", headers: []) == .entry(3))
        #expect(playback.answer(method: "GET", target: "/search?a=1&b=2", headers: []) == .entry(4))
        #expect(
            playback.answer(method: "GET", target: "/search?a=1", headers: [])
                == .notRecorded(nearest: "GET /search?b=2&a=1"))
    }

    @Test func aFailedFlowAnswersNothingAndTheNearestPathIsNamed() {
        var playback = Playback(entries: Self.entries)
        #expect(playback.count == 5)
        #expect(
            playback.answer(method: "GET", target: "/failed", headers: []) == .notRecorded(nearest: "GET /photos/p.jpg")
        )
        #expect(
            playback.answer(method: "GET", target: "/photos/q.jpg", headers: [])
                == .notRecorded(nearest: "GET /photos/p.jpg"))
    }

    @Test func theEntriesThatCanNeverAnswerAreNamed() {
        let informational = Self.entry("GET", "http://h/early", status: 103)
        var closed = Self.entry("GET", "http://h/closed", status: 0)
        closed.fault = HAR.Fault(kind: "closeBeforeHeaders", atByte: 0, how: "FIN")
        #expect(
            Playback.skipped(entries: Self.entries + [informational, closed]) == [
                "entry 5 (GET http://h/failed): the flow failed before any answer (status 0); it counts as not recorded",
                "entry 6 (GET http://h/early): an informational answer (103) is no answer; it counts as not recorded",
            ])
    }

    @Test func matchingOnTheHostCanBeAskedFor() {
        var matching = RequestMatching()
        matching.fields.insert(.host)
        var playback = Playback(entries: Self.entries, matching: matching)
        if case .entry = playback.answer(method: "HEAD", target: "/photos/p.jpg", headers: []) {
            Issue.record("the recorded HEAD was for other.example, not the requested host")
        }
    }

    @Test func entriesOfOtherServicesAreLeftOut() {
        var apns = Self.entry("GET", "http://h/photos/p.jpg")
        apns.service = "apns"
        var playback = Playback(entries: [apns], service: "media")
        #expect(playback.count == 0)
        #expect(playback.answer(method: "GET", target: "/photos/p.jpg", headers: []) == .notRecorded(nearest: nil))
    }

    @Test func recordModesAreVcrpys() {
        #expect(RecordMode.allCases.map(\.rawValue) == ["once", "new_episodes", "none", "all"])
    }
}

/// Matching as a user writes it on the command line: a row per input.
struct RequestMatchingSettingTests {
    typealias Field = RequestMatching.Field

    @Test(arguments: [
        ("method,path", Set<Field>([.method, .path])),
        (" Method , HOST ,path,query", Set<Field>([.method, .host, .path, .query])),
        ("path,path", Set<Field>([.path])),
    ])
    func partsAreRead(_ text: String, _ fields: Set<Field>) throws {
        #expect(try RequestMatching(fields: text, headers: nil).fields == fields)
    }

    @Test(arguments: [
        ("Range, If-Range", ["range", "if-range"]),
        ("", []),
        (" , ", []),
    ])
    func headersAreRead(_ text: String, _ headers: [String]) throws {
        #expect(try RequestMatching(fields: nil, headers: text).headers == headers)
    }

    @Test func nothingGivenKeepsTheDefault() throws {
        #expect(try RequestMatching(fields: nil, headers: nil) == RequestMatching())
    }

    static let badSettings: [(String?, String?, String)] = [
        ("", nil, "'' is not a part of a request to match on; use a comma list of method, host, path, query"),
        (
            "method,,path", nil,
            "'' is not a part of a request to match on; use a comma list of method, host, path, query"
        ),
        ("body", nil, "'body' is not a part of a request to match on; use a comma list of method, host, path, query"),
        (nil, "range,x y", "'x y' is not a header name"),
        (nil, "a:b", "'a:b' is not a header name"),
        (nil, String(repeating: "h,", count: 33), "at most 32 headers, not 33"),
        (nil, String(repeating: "x", count: 101), "'\(String(repeating: "x", count: 40))' is not a header name"),
    ]

    @Test(arguments: badSettings)
    func badSettingsSayWhatIsWrong(_ fields: String?, _ headers: String?, _ problem: String) {
        let error = #expect(throws: RequestMatchingError.self) {
            try RequestMatching(fields: fields, headers: headers)
        }
        #expect(error?.description == problem)
    }
}
