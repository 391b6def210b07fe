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
        public var onlyChangesHeaders: Bool {
            switch self {
            case .changeETag, .ignoreRange, .noAcceptRanges, .noContentLength: true
            case .fin, .reset, .stall, .closeBeforeHeaders, .lyingContentLength, .status: false
            }
        }
    }

    public var fault: Kind
    /// Which paths: a glob where `*` matches any run of characters (also `/`) and `?` one; all when nil.
    public var path: String?
    /// Only the first this many matching requests; every one when nil.
    public var count: Int?
    /// Each matching request with this probability, from a generator seeded with `seed`.
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
        switch fault {
        case .fin, .reset, .stall:
            switch (afterBytes, afterFraction) {
            case (let bytes?, nil) where InputBounds.bytes.contains(bytes): return nil
            case (nil, let fraction?) where (0...1).contains(fraction): return nil
            default:
                return
                    "\(fault.rawValue) needs either afterBytes (0 to \(InputBounds.bytes.upperBound)) or afterFraction (0 to 1)"
            }
        case .lyingContentLength:
            let most = InputBounds.bytes.upperBound
            guard let by, by != 0, (-most...most).contains(by) else {
                return "lyingContentLength needs by: a number of bytes other than 0, from -\(most) to \(most)"
            }
        case .status:
            guard let status, (400...599).contains(status) else { return "status needs status: 400 to 599" }
            if let retryAfter,
                let problem = InputBounds.problem("retryAfter", retryAfter, in: InputBounds.seconds, unit: " s")
            {
                return problem
            }
        default:
            break
        }
        return nil
    }

    /// Where a cut falls in a body of `length` bytes.
    func cutOffset(in length: Int) -> Int {
        if let afterBytes { return min(afterBytes, length) }
        return min(length, Int((afterFraction ?? 0) * Double(length)))
    }

    /// The `Content-Length` a `lyingContentLength` rule declares for a body of `length` bytes.
    func declaredLength(of length: Int) -> Int { max(0, length + (by ?? 0)) }

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
}

/// `*` and `?` globbing over bytes, in time proportional to pattern × text at worst and without
/// recursion: on a mismatch only the last `*` needs to take one more byte (the classic greedy matcher),
/// since anything an earlier star could absorb the last one can too.
enum Glob {
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var steps = 0
        return matches(pattern, text, steps: &steps)
    }

    /// The same, counting the loop's steps in `steps` (the tests hold it to pattern × text).
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>, steps: inout Int) -> Bool {
        let star = UInt8(ascii: "*")
        let any = UInt8(ascii: "?")
        var p = pattern.startIndex
        var t = text.startIndex
        // Where the last star was seen, and the text position it has absorbed up to.
        var lastStar: (pattern: Int, text: Int)?
        while t < text.endIndex {
            steps += 1
            if p < pattern.endIndex, pattern[p] == star {
                lastStar = (p, t)
                p += 1
            } else if p < pattern.endIndex, pattern[p] == any || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star = lastStar {
                lastStar = (star.pattern, star.text + 1)
                p = star.pattern + 1
                t = star.text + 1
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == star { p += 1 }
        return p == pattern.endIndex
    }
}

/// The faults one request gets: at most one that ends or replaces the response (a cut, a stall, a
/// status, a lying length, a close), and any number that only change its headers.
struct AppliedFaults: Equatable {
    var ending: MediaFault?
    var headerChanges: Set<MediaFault.Kind> = []

    static let none = AppliedFaults()

    var isEmpty: Bool { ending == nil && headerChanges.isEmpty }

    func contains(_ kind: MediaFault.Kind) -> Bool {
        ending?.fault == kind || headerChanges.contains(kind)
    }
}

/// The faults in force and how often each has fired. Decides, request by request, which faults apply:
/// every rule that matches and is due, except that of the rules that end or replace the response only
/// the first one does (the others stay due for later requests).
struct MediaFaultPlan {
    struct Rule {
        var id: Int
        var fault: MediaFault
        var matched = 0
        var fired = 0
        var random: SplitMix64

        init(id: Int, fault: MediaFault) {
            self.id = id
            self.fault = fault
            self.random = SplitMix64(seed: fault.seed ?? 0)
        }
    }

    /// Every request tries every rule: a bound on how many a control client can add, and on the bytes
    /// of their path patterns together, so that matching a request (at most pattern × target steps per
    /// rule) stays cheap whatever the rules are.
    static let mostRules = 1000
    static let mostPatternBytes = 4096

    /// Whether `fault` can join the rules in force; a sentence saying why not otherwise.
    func refusal(adding fault: MediaFault) -> String? {
        if rules.count >= Self.mostRules {
            return "at most \(Self.mostRules) fault rules are kept; DELETE /faults clears them"
        }
        let bytes = rules.reduce(fault.path?.utf8.count ?? 0) { $0 + ($1.fault.path?.utf8.count ?? 0) }
        if bytes > Self.mostPatternBytes {
            return
                "the rules' path patterns may hold \(Self.mostPatternBytes) bytes together; DELETE /faults clears them"
        }
        return nil
    }

    private(set) var rules: [Rule] = []
    private var nextId = 1

    mutating func add(_ fault: MediaFault) -> Int {
        defer { nextId += 1 }
        rules.append(Rule(id: nextId, fault: fault))
        return nextId
    }

    mutating func remove(id: Int) -> Bool {
        guard let index = rules.firstIndex(where: { $0.id == id }) else { return false }
        rules.remove(at: index)
        return true
    }

    mutating func removeAll() { rules.removeAll() }

    var status: [MediaFaultStatus] {
        rules.map { MediaFaultStatus(id: $0.id, rule: $0.fault, matched: $0.matched, fired: $0.fired) }
    }

    /// The faults for the next request to `path`, each counted as fired; ``AppliedFaults/none`` when
    /// no rule applies.
    mutating func next(for path: String) -> AppliedFaults {
        var applied = AppliedFaults()
        for index in rules.indices where rules[index].fault.matches(path: path) {
            let fault = rules[index].fault
            if let count = fault.count, rules[index].fired >= count { continue }
            let onlyHeaders = fault.fault.onlyChangesHeaders
            if !onlyHeaders, applied.ending != nil { continue }
            rules[index].matched += 1
            if let probability = fault.probability {
                let draw = Double(rules[index].random.next() >> 11) / Double(1 << 53)
                guard draw < probability else { continue }
            }
            rules[index].fired += 1
            if onlyHeaders { applied.headerChanges.insert(fault.fault) } else { applied.ending = fault }
        }
        return applied
    }
}
