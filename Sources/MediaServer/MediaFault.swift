import Foundation
import HarnessTimeline

/// Something the media server does wrong on purpose, and to which requests.
///
/// As JSON (the control API) and YAML (harness.yml) it is one flat object:
///
///     {"fault": "reset", "afterBytes": 123456, "path": "/videos/*", "count": 1}
///     {"fault": "status", "status": 503, "retryAfter": 2, "count": 2}
///     {"fault": "fin", "afterFraction": 0.6, "probability": 0.25, "seed": 7}
public struct MediaFault: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// End the body early with FIN (an orderly close): the client sees a short body.
        case fin
        /// End the body early with RST (SO_LINGER 0): the client sees "connection reset by peer".
        case reset
        /// Stop sending the body and never go on; the connection stays open until the client gives up.
        case stall
        /// Close the connection as soon as the request arrives, before any status line.
        case closeBeforeHeaders
        /// Declare a `Content-Length` off by `by` bytes: shorter sends only that many; longer sends
        /// the whole body and closes.
        case lyingContentLength
        /// Send no `Content-Length` (chunked): the client cannot know the size.
        case noContentLength
        /// Answer `status` (500 or 503, say) with `Retry-After: retryAfter` instead of the file.
        case status
        /// The file changed: a new `ETag` and `Last-Modified` from this request on, so a resume with
        /// `If-Range` must start over.
        case changeETag
        /// Answer as a server without range support: no `Accept-Ranges`, and `Range` ignored (200).
        case ignoreRange
        /// Leave out `Accept-Ranges` but still honour `Range`.
        case noAcceptRanges

        /// Whether the fault only changes the response's headers (and how `Range` is read), so that it
        /// can apply together with a fault that ends or replaces the response.
        public var onlyChangesHeaders: Bool { !effect.endsTheResponse }
    }

    public var fault: Kind
    /// Which paths: a glob where `*` matches any run of characters (also `/`) and `?` one; all when nil.
    public var path: String?
    /// Only the first this many matching requests; every one when nil.
    public var count: Int?
    /// Each matching request with this probability, from a generator seeded with `seed` (drawn at
    /// random when there is none, and reported in ``MediaFaultStatus/seed``).
    public var probability: Double?
    public var seed: UInt64?
    /// For `fin`, `reset` and `stall`: where the body stops, in bytes of this response's body or as a
    /// fraction of it.
    public var afterBytes: Int?
    public var afterFraction: Double?
    /// For `lyingContentLength`: how many bytes more (positive) or fewer (negative) to declare.
    public var by: Int?
    /// For `status`.
    public var status: Int?
    public var retryAfter: Int?

    /// The longest `path` pattern a rule may have: with request targets bounded too, matching stays cheap.
    public static let longestPath = 1024

    public init(_ fault: Kind, path: String? = nil, count: Int? = nil) {
        self.fault = fault
        self.path = path
        self.count = count
    }

    /// What is wrong with the rule, in words; nil when it can be used.
    public var problem: String? {
        if let count, let problem = InputBounds.problem("count", count, in: InputBounds.count) { return problem }
        if let probability, let problem = InputBounds.problem("probability", probability, in: 0...1) { return problem }
        if let path, path.utf8.count > Self.longestPath {
            return "path must be at most \(Self.longestPath) bytes long, not \(path.utf8.count)"
        }
        return fault.effect.problem(of: self)
    }

    func matches(path candidate: String) -> Bool {
        guard let path else { return true }
        return Glob.matches(Array(path.utf8)[...], Array(candidate.utf8)[...])
    }
}

/// A fault rule in force, as the control API lists it.
public struct MediaFaultStatus: Codable, Sendable, Equatable {
    public var id: Int
    public var rule: MediaFault
    /// Requests the rule's path matched while it was due (before a random draw).
    public var matched: Int
    /// Requests it was applied to.
    public var fired: Int
    /// The seed of a rule with a probability: its own, or the one drawn for it.
    public var seed: UInt64?
}
