import HarnessTimeline

/// One kind of media fault: what a rule of its kind needs, and what it changes about a reply. A new
/// fault is a new ``MediaFault/Kind`` case and one small type here; nothing else decides what it does.
protocol MediaFaultEffect {
    /// Whether it ends or replaces the response (at most one such rule applies to a request) rather
    /// than only changing its headers and how `Range` is read.
    static var endsTheResponse: Bool { get }
    /// What is wrong with a rule of this kind beyond what every rule is checked for; nil when it can be used.
    static func problem(of rule: MediaFault) -> String?
    /// Changes the reply as the rule says.
    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault)
}

extension MediaFault.Kind {
    /// The type that says what faults of this kind do.
    var effect: any MediaFaultEffect.Type {
        switch self {
        case .fin: FinFault.self
        case .reset: ResetFault.self
        case .stall: StallFault.self
        case .closeBeforeHeaders: CloseBeforeHeadersFault.self
        case .lyingContentLength: LyingContentLengthFault.self
        case .noContentLength: NoContentLengthFault.self
        case .status: StatusFault.self
        case .changeETag: ChangeETagFault.self
        case .ignoreRange: IgnoreRangeFault.self
        case .noAcceptRanges: NoAcceptRangesFault.self
        }
    }
}

/// What the faults applied to one request change about its reply. Every field starts as a faultless
/// server would answer; each rule's ``MediaFaultEffect`` edits it.
struct ReplyAlterations: Equatable, Sendable {
    /// Instead of looking at the file.
    enum Replacement: Equatable, Sendable {
        /// Close the connection before any status line.
        case closeBeforeHeaders
        /// This status, with `Retry-After` when given.
        case status(Int, retryAfter: Int?)
    }

    /// Where the body stops.
    enum BodyEnd: Equatable, Sendable {
        case whole
        /// At `afterBytes` bytes, or `afterFraction` of the body, then the connection ends as `ending` says.
        case cut(afterBytes: Int?, afterFraction: Double?, ending: ConnectionEnding)
        /// `Content-Length` declares `by` bytes more (positive) or fewer than the body has.
        case declaredOffBy(Int)
    }

    var replacement: Replacement?
    /// `Range` and `If-Range` are read (otherwise ignored: 200 and the whole file).
    var honoursRanges = true
    /// `Accept-Ranges: bytes` is sent.
    var advertisesRanges = true
    /// `Content-Length` is sent (otherwise the body is chunked: the client cannot know the size).
    var declaresLength = true
    /// The file is taken as changed from this request on: a new ETag and Last-Modified.
    var newVersion = false
    var bodyEnd = BodyEnd.whole

    /// What `rules` do together, in order.
    init(_ rules: [MediaFault] = []) {
        for rule in rules { rule.fault.effect.alter(&self, by: rule) }
    }

    /// How a body of `length` bytes goes out: the `Content-Length` declared (nil: none), where the body
    /// stops, how the connection ends, and whether it closes after a complete response.
    func frame(length: Int) -> BodyFrame {
        var frame = BodyFrame(declaredLength: declaresLength ? length : nil, limit: length)
        switch bodyEnd {
        case .whole:
            break
        case .cut(let afterBytes, let afterFraction, let ending):
            // A cut at or past the end leaves the body whole: nothing to cut.
            frame.limit = afterBytes.map { min($0, length) } ?? min(length, Int((afterFraction ?? 0) * Double(length)))
            if frame.limit < length { frame.ending = ending }
        case .declaredOffBy(let by):
            let declared = max(0, length + by)
            frame.declaredLength = declared
            // Claiming less sends only that much, so the connection stays usable; claiming more sends
            // everything and closes (after the response, so FIN), leaving the client short.
            if declared < length { frame.limit = declared } else { frame.closeAfter = true }
        }
        return frame
    }
}

/// How one response's body goes out.
struct BodyFrame: Equatable, Sendable {
    /// `Content-Length`; nil: chunked.
    var declaredLength: Int?
    /// Body bytes sent before the response stops.
    var limit: Int
    var ending = ConnectionEnding.keepAlive
    /// The response is complete, and the connection closes after it.
    var closeAfter = false
}

/// How a response leaves its connection.
enum ConnectionEnding: Equatable, Sendable {
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

/// The cuts: the body stops at a byte or a fraction, then the connection ends one way.
protocol BodyCutFault: MediaFaultEffect {
    static var ending: ConnectionEnding { get }
}

extension BodyCutFault {
    static var endsTheResponse: Bool { true }

    static func problem(of rule: MediaFault) -> String? {
        switch (rule.afterBytes, rule.afterFraction) {
        case (let bytes?, nil) where InputBounds.bytes.contains(bytes): nil
        case (nil, let fraction?) where (0...1).contains(fraction): nil
        default:
            "\(rule.fault.rawValue) needs either afterBytes (0 to \(InputBounds.bytes.upperBound)) or afterFraction (0 to 1)"
        }
    }

    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) {
        reply.bodyEnd = .cut(afterBytes: rule.afterBytes, afterFraction: rule.afterFraction, ending: ending)
    }
}

/// End the body early with FIN (an orderly close): the client sees a short body.
enum FinFault: BodyCutFault { static let ending = ConnectionEnding.close }

/// End the body early with RST (SO_LINGER 0): the client sees "connection reset by peer".
enum ResetFault: BodyCutFault { static let ending = ConnectionEnding.reset }

/// Stop sending the body and never go on; the connection stays open until the client gives up.
enum StallFault: BodyCutFault { static let ending = ConnectionEnding.stall }

/// The faults that need nothing but their kind.
protocol PlainFault: MediaFaultEffect {}

extension PlainFault {
    static func problem(of rule: MediaFault) -> String? { nil }
}

/// Close the connection as soon as the request arrives, before any status line.
enum CloseBeforeHeadersFault: PlainFault {
    static let endsTheResponse = true
    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) { reply.replacement = .closeBeforeHeaders }
}

/// Declare a `Content-Length` off by `by` bytes.
enum LyingContentLengthFault: MediaFaultEffect {
    static let endsTheResponse = true

    static func problem(of rule: MediaFault) -> String? {
        let most = InputBounds.bytes.upperBound
        guard let by = rule.by, by != 0, (-most...most).contains(by) else {
            return "lyingContentLength needs by: a number of bytes other than 0, from -\(most) to \(most)"
        }
        return nil
    }

    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) {
        reply.bodyEnd = .declaredOffBy(rule.by ?? 0)
    }
}

/// Answer `status` with `Retry-After: retryAfter` instead of the file.
enum StatusFault: MediaFaultEffect {
    static let endsTheResponse = true

    static func problem(of rule: MediaFault) -> String? {
        guard let status = rule.status, (400...599).contains(status) else { return "status needs status: 400 to 599" }
        if let retryAfter = rule.retryAfter {
            return InputBounds.problem("retryAfter", retryAfter, in: InputBounds.seconds, unit: " s")
        }
        return nil
    }

    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) {
        reply.replacement = .status(rule.status ?? 503, retryAfter: rule.retryAfter)
    }
}

/// Send no `Content-Length` (chunked).
enum NoContentLengthFault: PlainFault {
    static let endsTheResponse = false
    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) { reply.declaresLength = false }
}

/// The file changed: a new `ETag` and `Last-Modified` from this request on.
enum ChangeETagFault: PlainFault {
    static let endsTheResponse = false
    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) { reply.newVersion = true }
}

/// Answer as a server without range support: no `Accept-Ranges`, and `Range` ignored.
enum IgnoreRangeFault: PlainFault {
    static let endsTheResponse = false

    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) {
        reply.honoursRanges = false
        reply.advertisesRanges = false
    }
}

/// Leave out `Accept-Ranges` but still honour `Range`.
enum NoAcceptRangesFault: PlainFault {
    static let endsTheResponse = false
    static func alter(_ reply: inout ReplyAlterations, by rule: MediaFault) { reply.advertisesRanges = false }
}
