import DeviceProtocol

/// nsurlsessiond's decisions for one download task across its attempts (docs/ios-rules.md U8, U11): what
/// each request asks for, what each response means for the bytes already on disk, and what follows an
/// attempt that ended early (retry from where it stopped, start over, or fail). A value: ``DownloadTask``
/// does the requests and the file writes and asks it at each step.
struct DownloadAttempts: Sendable, Equatable {
    /// What the next request asks for.
    enum Request: Equatable, Sendable {
        /// The whole file.
        case whole
        /// The rest of the file, with `Range: bytes=<from>-` and `If-Range: <validator>`.
        case rest(from: Int64, validator: String)
    }

    /// What a response's body is to the bytes already on disk.
    enum Body: Equatable, Sendable {
        /// The rest of the file: append. `announce`: the task was made from resume data and this is the
        /// first response that goes on from it (the app is told `didResumeAtOffset`).
        case append(from: Int64, expected: Int64, announce: Bool)
        /// The whole file again: truncate, then write. `lost` bytes had been written and are thrown away,
        /// for the reason `why` (nil when there were none).
        case whole(expected: Int64, lost: Int64, why: String?)
    }

    /// What follows an attempt that ended early.
    enum Next: Equatable, Sendable {
        /// Try again after `after`: attempt `attempt` ended early; the next asks from byte `resumeFrom`
        /// (nil: from zero), and `why` says why bytes already written cannot be used (nil when they can, or
        /// there are none).
        case retry(attempt: Int, after: Duration, resumeFrom: Int64?, why: String?)
        /// Give up: the task fails with this error.
        case fail(TaskError)
    }

    /// Background sessions retry lost connections and timeouts; default sessions fail at once.
    let retries: Bool
    /// When the task stops retrying (`timeoutIntervalForResource`), in policy time.
    let giveUpAt: Duration
    /// The first wait between attempts; it doubles after each attempt that received nothing, up to
    /// `delayLimit`, and comes back to `firstDelay` after an attempt that received bytes.
    let firstDelay: Duration
    let delayLimit: Duration
    private var nextDelay: Duration

    /// The attempt under way, from 1.
    private(set) var number = 1
    /// Bytes of the file on disk, and its complete length (-1: unknown).
    private(set) var written: Int64 = 0
    private(set) var expected: Int64 = -1
    /// What the last response that carried the file said about resuming; nil before any.
    private(set) var validator: ResumeValidator?
    /// Body bytes the current attempt received.
    private(set) var receivedInAttempt: Int64 = 0
    /// The task was made from resume data and has not gone on from it yet.
    private(set) var fromResumeData = false

    init(retries: Bool, giveUpAt: Duration, firstDelay: Duration, delayLimit: Duration = .seconds(60)) {
        self.retries = retries
        self.giveUpAt = giveUpAt
        self.firstDelay = firstDelay
        self.delayLimit = delayLimit
        self.nextDelay = firstDelay
    }

    /// The task starts from resume data: `bytes` of the file are on disk already, to resume against
    /// `validator` (an ETag when it is quoted, else a Last-Modified date).
    mutating func seed(bytes: Int64, expected: Int64, validator: String) {
        written = bytes
        self.expected = expected
        let isETag = validator.hasPrefix("\"")
        self.validator = ResumeValidator(
            acceptRanges: "bytes", etag: isETag ? validator : nil, lastModified: isETag ? nil : validator)
        fromResumeData = true
    }

    /// Why the bytes on disk cannot be resumed; nil when they can, or when there are none.
    var whyNotResumable: String? {
        guard written > 0 else { return nil }
        guard let validator else { return "no response has said whether the download can resume" }
        return validator.whyNotResumable
    }

    /// What the next request asks for: the rest when bytes are on disk and the server allows resuming.
    var request: Request {
        guard written > 0, let validator, validator.whyNotResumable == nil, let value = validator.validator else {
            return .whole
        }
        return .rest(from: written, validator: value)
    }

    /// An attempt begins: what its request asks for.
    mutating func begin() -> Request {
        receivedInAttempt = 0
        return request
    }

    /// A response arrived with `status` and these headers: whether its body continues the file or
    /// replaces it. As on iOS, an error status still completes the download: its body is the file.
    mutating func responded(
        status: Int, contentRange: String?, contentLength: String?, acceptRanges: String?, etag: String?,
        lastModified: String?
    ) -> Body {
        let asked = request
        let range = contentRange.flatMap(ContentRange.init)
        let body: Body
        if case .rest(let from, _) = asked, status == 206, let range, range.first == from {
            expected = range.complete ?? -1
            body = .append(from: from, expected: expected, announce: fromResumeData)
            fromResumeData = false
        } else {
            var why: String?
            if written > 0 {
                switch asked {
                case .whole:
                    why = validator?.whyNotResumable ?? "the download could not resume"
                case .rest(let from, let value):
                    why =
                        status == 206
                        ? "the server answered the resume from byte \(from) with Content-Range \(contentRange ?? "(none)")"
                        : "the server answered \(status) to Range with If-Range \(value): the file changed or ranges are not honoured"
                }
            }
            let lost = written
            written = 0
            expected = contentLength.flatMap { Int64($0) }.map { max($0, -1) } ?? -1
            body = .whole(expected: expected, lost: lost, why: why)
        }
        validator = ResumeValidator(acceptRanges: acceptRanges, etag: etag, lastModified: lastModified)
        return body
    }

    /// `count` body bytes were written to the file.
    mutating func received(_ count: Int64) {
        written += count
        receivedInAttempt += count
    }

    /// The body ended short of the length the response announced.
    var endedShort: Bool { expected >= 0 && written != expected }

    /// The attempt ended early with `error`. `networkAllows`: the network still suits the task (when it
    /// does not, the retry waits for it, not for a delay). `cancelled`: the task was cancelled.
    mutating func interrupted(_ error: TaskError, networkAllows: Bool, cancelled: Bool, now: Duration) -> Next {
        let delay = networkAllows ? backoff(afterAttemptThatReceivedBytes: receivedInAttempt > 0) : .zero
        // -1000 (a bad URL) cannot get better by trying again.
        guard retries, !cancelled, error.code != -1000, now + delay < giveUpAt else { return .fail(error) }
        defer { number += 1 }
        switch request {
        case .rest(let from, _): return .retry(attempt: number, after: delay, resumeFrom: from, why: nil)
        case .whole: return .retry(attempt: number, after: delay, resumeFrom: nil, why: whyNotResumable)
        }
    }

    /// Resume data for a task that ends now, when it is offered (a failure, or a cancellation that asked
    /// for it) and the download can go on later: bytes on disk, ranges and a validator
    /// (docs/ios-rules.md U11).
    func resumeData(offered: Bool) -> (bytes: Int64, expected: Int64, validator: String)? {
        guard offered, written > 0, let validator, validator.whyNotResumable == nil, let value = validator.validator
        else { return nil }
        return (written, expected, value)
    }

    private mutating func backoff(afterAttemptThatReceivedBytes receivedBytes: Bool) -> Duration {
        if receivedBytes { nextDelay = firstDelay }
        defer { nextDelay = min(nextDelay * 2, delayLimit) }
        return min(nextDelay, delayLimit)
    }
}
