import Foundation
import Recording
import TestSupport
import Testing

/// The reader takes what other tools write and says exactly where a file it cannot use goes wrong.
struct HARReaderTests {
    /// A HAR as mitmproxy's `savehar` writes it: fractional timings, base64 body, its own `_` fields.
    static let mitmproxyHAR = """
        {"log": {"version": "1.2", "creator": {"name": "mitmproxy", "version": "12.3.1", "comment": ""},
         "pages": [], "entries": [{
          "startedDateTime": "2026-11-24T08:00:00.123456+00:00", "time": 3.25,
          "request": {"method": "GET", "url": "http://127.0.0.1:8080/photos/a.jpg?size=large", "httpVersion": "HTTP/1.1",
            "cookies": [], "headers": [{"name": "Range", "value": "bytes=0-3"}], "queryString": [{"name": "size", "value": "large"}],
            "headersSize": 120, "bodySize": 0},
          "response": {"status": 206, "statusText": "Partial Content", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [{"name": "Content-Length", "value": "4"}],
            "content": {"size": 4, "mimeType": "image/jpeg", "text": "/9j/4A==", "encoding": "base64"},
            "redirectURL": "", "headersSize": 90, "bodySize": 4},
          "cache": {}, "timings": {"connect": -1, "ssl": -1, "send": 0.5, "wait": 2.25, "receive": 0.5},
          "_fault": {"kind": "reset", "atByte": 4, "how": "RST"}, "_resourceType": "image"}]}}
        """

    @Test func readsMitmproxysHARAndIgnoresCustomFieldsItDidNotWrite() throws {
        let har = try HARReader.read(Data(Self.mitmproxyHAR.utf8), file: "flows.har")
        let entry = try #require(har.log.entries.first)
        #expect(entry.time == 3.25)
        #expect(entry.request.method == "GET")
        #expect(entry.response.status == 206)
        #expect(entry.response.content.encoding == "base64")
        // Another tool's `_fault` means nothing to us: the spec says to ignore it.
        #expect(entry.fault == nil)
    }

    @Test func aByteOrderMarkIsIgnored() throws {
        let har = try HARReader.read(Data([0xEF, 0xBB, 0xBF]) + Data(Self.mitmproxyHAR.utf8), file: "bom.har")
        #expect(har.log.entries.count == 1)
    }

    @Test(arguments: [
        (
            "\"status\": 206,", "", "$.log.entries[0].response",
            "the required field \"status\" is missing"
        ),
        ("\"status\": 206", "\"status\": \"ok\"", "$.log.entries[0].response.status", "expected a number here"),
        ("\"version\": \"1.2\"", "\"version\": \"2.0\"", "$.log.version", "HAR version \"2.0\" is not read"),
        ("\"send\": 0.5", "\"send\": -3", "$.log.entries[0].timings.send", "must be a number of milliseconds from 0"),
        ("\"wait\": 2.25", "\"wait\": 1e300", "$.log.entries[0].timings.wait", "(a day)"),
        ("\"text\": \"/9j/4A==\"", "\"text\": \"***\"", "$.log.entries[0].response.content.text", "'*' at offset 0"),
        // Foundation's lenient decoding read these as bytes (issue 32): the words as 15 of them.
        (
            "\"text\": \"/9j/4A==\"", "\"text\": \"this is not base64 at all\"",
            "$.log.entries[0].response.content.text", "' ' at offset 4"
        ),
        (
            "\"text\": \"/9j/4A==\"", "\"text\": \"_9j-4A==\"", "$.log.entries[0].response.content.text",
            "'_' at offset 0"
        ),
        (
            "\"text\": \"/9j/4A==\"", "\"text\": \"/9j/4A\"", "$.log.entries[0].response.content.text",
            "not whole groups"
        ),
        (
            "\"text\": \"/9j/4A==\"", "\"text\": \"/9j/4A=A\"", "$.log.entries[0].response.content.text",
            "'A' at offset 7"
        ),
        ("\"encoding\": \"base64\"", "\"encoding\": \"gzip\"", "$.log.entries[0].response.content.encoding", "gzip"),
        (
            "http://127.0.0.1:8080/photos/a.jpg?size=large", "photos/a.jpg", "$.log.entries[0].request.url",
            "not an absolute URL"
        ),
    ])
    func aBadFieldIsNamedByItsJSONPath(original: String, replacement: String, path: String, words: String) throws {
        let text = Self.mitmproxyHAR.replacingOccurrences(of: original, with: replacement)
        #expect(text != Self.mitmproxyHAR)
        let error = try #require(throws: CassetteError.self) { try HARReader.read(Data(text.utf8), file: "bad.har") }
        #expect(error.file == "bad.har")
        #expect(error.jsonPath == path)
        #expect(error.problem.contains(words), "\(error)")
    }

    /// A wrapped export (line breaks every 76 characters) and an empty body are base64; the bytes are
    /// the ones encoded.
    @Test(arguments: [("/9j/\\n4A==", [0xFF, 0xD8, 0xFF, 0xE0]), ("", []), ("AAEC\\r\\nAw==", [0, 1, 2, 3])])
    func base64WrappedOrEmptyIsRead(_ text: String, _ bytes: [UInt8]) throws {
        let har = Self.mitmproxyHAR.replacingOccurrences(of: "\"text\": \"/9j/4A==\"", with: "\"text\": \"\(text)\"")
            .replacingOccurrences(of: "\"size\": 4,", with: "\"size\": \(bytes.count),")
            .replacingOccurrences(of: "\"bodySize\": 4}", with: "\"bodySize\": \(bytes.count)}")
            .replacingOccurrences(of: "\"value\": \"4\"}", with: "\"value\": \"\(bytes.count)\"}")
        let read = try HARReader.read(Data(har.utf8), file: "wrapped.har")
        #expect(
            read.log.entries[0].response.content.text
                == text.replacingOccurrences(of: "\\n", with: "\n")
                .replacingOccurrences(of: "\\r", with: "\r"))
        let folder = try PackagePaths.temporaryDirectory()
        let file = folder.appendingPathComponent("wrapped.har")
        try Data(har.utf8).write(to: file)
        #expect(try Cassette.open(file).body(of: 0) == .inline(Data(bytes)))
    }

    @Test func aTruncatedFileSaysSo() throws {
        let text = String(Self.mitmproxyHAR.prefix(300))
        let error = try #require(throws: CassetteError.self) { try HARReader.read(Data(text.utf8), file: "cut.har") }
        #expect(error.jsonPath == "$")
        #expect(error.problem.contains("truncated or corrupt"), "\(error)")
    }

    @Test func ourOwnFaultMustSitWhereTheBodyStopped() throws {
        let ours = Self.mitmproxyHAR.replacingOccurrences(of: "\"mitmproxy\"", with: "\"PushHarness\"")
        #expect(try HARReader.read(Data(ours.utf8), file: "ok.har").log.entries[0].fault?.atByte == 4)
        let wrong = ours.replacingOccurrences(of: "\"atByte\": 4", with: "\"atByte\": 9")
        let error = try #require(throws: CassetteError.self) { try HARReader.read(Data(wrong.utf8), file: "f.har") }
        #expect(error.jsonPath == "$.log.entries[0]._fault.atByte")
    }

    @Test func writesMustAddUpToTheBodySent() throws {
        let ours = Self.mitmproxyHAR.replacingOccurrences(of: "\"mitmproxy\"", with: "\"PushHarness\"")
            .replacingOccurrences(of: "\"_resourceType\"", with: "\"_writes\": [[0, 1], [2.5, 2]], \"_x\"")
        let error = try #require(throws: CassetteError.self) { try HARReader.read(Data(ours.utf8), file: "w.har") }
        #expect(error.jsonPath == "$.log.entries[0]._writes")
        #expect(error.problem.contains("adds up to 3 bytes"))
        let negative = ours.replacingOccurrences(of: "[2.5, 2]", with: "[-1, 3]")
        let second = try #require(throws: CassetteError.self) { try HARReader.read(Data(negative.utf8), file: "w.har") }
        #expect(second.jsonPath == "$.log.entries[0]._writes[1]")
    }
}
