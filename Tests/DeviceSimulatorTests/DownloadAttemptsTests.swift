import DeviceProtocol
import Testing

@testable import DeviceSimulator

/// nsurlsessiond's decisions for one download, a row each: what is asked, what a response means for
/// the bytes on disk, and what follows an attempt that ended early.
@Suite struct DownloadAttemptsTests {
    static let lost = TaskError(code: -1005, localizedDescription: "the network connection was lost")
    static let etag = "\"v1\""

    func background(giveUpAt: Duration = .seconds(3600), firstDelay: Duration = .seconds(1)) -> DownloadAttempts {
        DownloadAttempts(retries: true, giveUpAt: giveUpAt, firstDelay: firstDelay)
    }

    /// A 200 for the whole file, with what the server says about ranges, then `bytes` of its body.
    func served(
        _ attempts: inout DownloadAttempts, bytes: Int64, of length: Int64 = 1000, acceptRanges: String? = "bytes",
        etag: String? = etag, lastModified: String? = nil
    ) {
        _ = attempts.begin()
        _ = attempts.responded(
            status: 200, contentRange: nil, contentLength: "\(length)", acceptRanges: acceptRanges, etag: etag,
            lastModified: lastModified)
        attempts.received(bytes)
    }

    @Test func theFirstRequestAsksForTheWholeFile() {
        var attempts = background()
        #expect(attempts.begin() == .whole)
    }

    @Test func afterBytesWithRangesAndAStrongETagTheNextRequestAsksForTheRest() {
        var attempts = background()
        served(&attempts, bytes: 400)
        #expect(attempts.endedShort)
        let next = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        #expect(next == .retry(attempt: 1, after: .seconds(1), resumeFrom: 400, why: nil))
        #expect(attempts.begin() == .rest(from: 400, validator: Self.etag))
    }

    @Test func aLastModifiedDateServesWhenThereIsNoStrongETag() {
        var attempts = background()
        served(&attempts, bytes: 10, etag: "W/\"weak\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(attempts.begin() == .rest(from: 10, validator: "Sun, 06 Nov 1994 08:49:37 GMT"))
    }

    @Test(arguments: [
        (
            "bytes" as String?, nil as String?,
            "the server sent neither a strong ETag nor a Last-Modified to resume against"
        ),
        (nil, etag, "the server sent no Accept-Ranges: bytes"),
        ("none", etag, "the server sent no Accept-Ranges: bytes"),
    ])
    func withoutRangesOrAValidatorTheRetryStartsOver(acceptRanges: String?, etag: String?, why: String) {
        var attempts = background()
        served(&attempts, bytes: 400, acceptRanges: acceptRanges, etag: etag)
        let next = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        #expect(next == .retry(attempt: 1, after: .seconds(1), resumeFrom: nil, why: why))
        #expect(attempts.begin() == .whole)
    }

    @Test func anAttemptThatReceivedNothingStartsWithoutAReason() {
        var attempts = background()
        _ = attempts.begin()
        let next = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        #expect(next == .retry(attempt: 1, after: .seconds(1), resumeFrom: nil, why: nil))
    }

    @Test func aMatchingPartialResponseIsAppended() {
        var attempts = background()
        served(&attempts, bytes: 400)
        _ = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        _ = attempts.begin()
        let body = attempts.responded(
            status: 206, contentRange: "bytes 400-999/1000", contentLength: "600", acceptRanges: "bytes",
            etag: Self.etag, lastModified: nil)
        #expect(body == .append(from: 400, expected: 1000, announce: false))
        attempts.received(600)
        #expect(!attempts.endedShort)
        #expect(attempts.written == 1000)
    }

    @Test(arguments: [
        (
            200, nil as String?,
            "the server answered 200 to Range with If-Range \"v1\": the file changed or ranges are not honoured"
        ),
        (206, "bytes 0-999/1000", "the server answered the resume from byte 400 with Content-Range bytes 0-999/1000"),
        (206, nil, "the server answered the resume from byte 400 with Content-Range (none)"),
    ])
    func aResponseThatIsNotTheRestReplacesTheFile(status: Int, contentRange: String?, why: String) {
        var attempts = background()
        served(&attempts, bytes: 400)
        _ = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        _ = attempts.begin()
        let body = attempts.responded(
            status: status, contentRange: contentRange, contentLength: "1000", acceptRanges: "bytes", etag: Self.etag,
            lastModified: nil)
        #expect(body == .whole(expected: 1000, lost: 400, why: why))
        #expect(attempts.written == 0)
    }

    @Test func resumeDataIsAnnouncedOnTheFirstResponseThatGoesOnFromIt() {
        var attempts = background()
        attempts.seed(bytes: 300, expected: 1000, validator: Self.etag)
        #expect(attempts.begin() == .rest(from: 300, validator: Self.etag))
        let first = attempts.responded(
            status: 206, contentRange: "bytes 300-999/1000", contentLength: "700", acceptRanges: "bytes",
            etag: Self.etag, lastModified: nil)
        #expect(first == .append(from: 300, expected: 1000, announce: true))
        attempts.received(100)
        _ = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        _ = attempts.begin()
        let second = attempts.responded(
            status: 206, contentRange: "bytes 400-999/1000", contentLength: "600", acceptRanges: "bytes",
            etag: Self.etag, lastModified: nil)
        #expect(second == .append(from: 400, expected: 1000, announce: false))
    }

    @Test func waitsDoubleWhileAttemptsReceiveNothingAndStartOverAfterBytes() {
        var attempts = background()
        let quiet = (0..<3).map { _ in
            _ = attempts.begin()
            return attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        }
        #expect(
            quiet == [
                .retry(attempt: 1, after: .seconds(1), resumeFrom: nil, why: nil),
                .retry(attempt: 2, after: .seconds(2), resumeFrom: nil, why: nil),
                .retry(attempt: 3, after: .seconds(4), resumeFrom: nil, why: nil),
            ])
        served(&attempts, bytes: 1)
        let afterBytes = attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero)
        #expect(afterBytes == .retry(attempt: 4, after: .seconds(1), resumeFrom: 1, why: nil))
    }

    @Test func waitsNeverExceedAMinute() {
        var attempts = background(firstDelay: .seconds(20))
        let delays = (0..<4).map { _ -> Duration? in
            _ = attempts.begin()
            guard
                case .retry(_, let after, _, _) = attempts.interrupted(
                    Self.lost, networkAllows: true, cancelled: false, now: .zero)
            else { return nil }
            return after
        }
        #expect(delays == [.seconds(20), .seconds(40), .seconds(60), .seconds(60)])
    }

    @Test func aTaskWaitingForItsNetworkRetriesWithoutADelay() {
        var attempts = background()
        served(&attempts, bytes: 5)
        let next = attempts.interrupted(Self.lost, networkAllows: false, cancelled: false, now: .zero)
        #expect(next == .retry(attempt: 1, after: .zero, resumeFrom: 5, why: nil))
    }

    @Test func aDefaultSessionFailsAtOnce() {
        var attempts = DownloadAttempts(retries: false, giveUpAt: .seconds(3600), firstDelay: .seconds(1))
        served(&attempts, bytes: 400)
        #expect(attempts.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .zero) == .fail(Self.lost))
    }

    @Test func aCancelledTaskABadURLAndTheResourceTimeoutEndTheRetries() {
        var cancelled = background()
        #expect(cancelled.interrupted(Self.lost, networkAllows: true, cancelled: true, now: .zero) == .fail(Self.lost))
        let badURL = TaskError(code: -1000, localizedDescription: "bad URL")
        var bad = background()
        #expect(bad.interrupted(badURL, networkAllows: true, cancelled: false, now: .zero) == .fail(badURL))
        var late = background(giveUpAt: .seconds(10))
        #expect(
            late.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .seconds(9)) == .fail(Self.lost))
        var inTime = background(giveUpAt: .seconds(10))
        let next = inTime.interrupted(Self.lost, networkAllows: true, cancelled: false, now: .seconds(8))
        #expect(next == .retry(attempt: 1, after: .seconds(1), resumeFrom: nil, why: nil))
    }

    @Test func resumeDataIsGivenOnlyWhenOfferedAndTheDownloadCanGoOn() {
        var resumable = background()
        served(&resumable, bytes: 400)
        #expect(resumable.resumeData(offered: true).map { [$0.bytes, $0.expected] } == [400, 1000])
        #expect(resumable.resumeData(offered: true)?.validator == Self.etag)
        #expect(resumable.resumeData(offered: false) == nil)
        var noRanges = background()
        served(&noRanges, bytes: 400, acceptRanges: nil)
        #expect(noRanges.resumeData(offered: true) == nil)
        var nothing = background()
        _ = nothing.begin()
        #expect(nothing.resumeData(offered: true) == nil)
    }
}
