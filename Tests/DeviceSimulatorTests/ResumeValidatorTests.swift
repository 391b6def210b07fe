import Testing

@testable import DeviceSimulator

@Suite struct ResumeValidatorTests {
    @Test func resumableOnlyWithByteRangesAndAValidator() {
        let full = ResumeValidator(
            acceptRanges: "bytes", etag: "\"abc\"", lastModified: "Sun, 22 Nov 2026 08:00:00 GMT")
        #expect(full.whyNotResumable == nil)
        #expect(full.validator == "\"abc\"", "a strong ETag is preferred")

        let noRanges = ResumeValidator(acceptRanges: nil, etag: "\"abc\"", lastModified: nil)
        #expect(noRanges.whyNotResumable == "the server sent no Accept-Ranges: bytes")
        #expect(ResumeValidator(acceptRanges: "none", etag: "\"abc\"", lastModified: nil).whyNotResumable != nil)

        let noValidator = ResumeValidator(acceptRanges: "bytes", etag: nil, lastModified: nil)
        #expect(noValidator.whyNotResumable?.contains("neither a strong ETag nor a Last-Modified") == true)
        #expect(
            ResumeValidator(acceptRanges: nil, etag: nil, lastModified: nil).whyNotResumable
                == "the server sent no Accept-Ranges: bytes and neither an ETag nor a Last-Modified")
    }

    @Test func aWeakETagFallsBackToLastModified() {
        let weak = ResumeValidator(
            acceptRanges: "bytes", etag: "W/\"abc\"", lastModified: "Sun, 22 Nov 2026 08:00:00 GMT")
        #expect(weak.validator == "Sun, 22 Nov 2026 08:00:00 GMT")
        #expect(ResumeValidator(acceptRanges: "bytes", etag: "W/\"abc\"", lastModified: nil).whyNotResumable != nil)
        #expect(ResumeValidator(acceptRanges: "none, bytes", etag: "\"a\"", lastModified: nil).acceptsRanges)
    }

    @Test func contentRange() {
        #expect(ContentRange("bytes 100-199/1000") == ContentRange(first: 100, last: 199, complete: 1000))
        #expect(ContentRange("bytes 100-199/*")?.complete == nil)
        #expect(ContentRange("bytes 200-100/1000") == nil)
        #expect(ContentRange("bytes 100-199/150") == nil, "the last byte must lie inside the complete length")
        #expect(ContentRange("items 1-2/3") == nil)
        #expect(ContentRange("bytes */1000") == nil)
    }
}

extension ContentRange {
    init(first: Int64, last: Int64, complete: Int64?) {
        self.init("bytes \(first)-\(last)/\(complete.map(String.init) ?? "*")")!
    }
}
