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

    public init(_ fault: Kind, path: String? = nil, count: Int? = nil) {
        self.fault = fault
        self.path = path
        self.count = count
    }

    /// What is wrong with the rule, in words; nil when it can be used.
    public var problem: String? {
        if let count, count < 1 { return "count must be at least 1" }
        if let probability, !(0...1).contains(probability) { return "probability must be between 0 and 1" }
        switch fault {
        case .fin, .reset, .stall:
            switch (afterBytes, afterFraction) {
            case (let bytes?, nil) where bytes >= 0: return nil
            case (nil, let fraction?) where (0...1).contains(fraction): return nil
            default: return "\(fault.rawValue) needs either afterBytes (at least 0) or afterFraction (0 to 1)"
            }
        case .lyingContentLength:
            guard let by, by != 0 else { return "lyingContentLength needs by: a number of bytes other than 0" }
        case .status:
            guard let status, (400...599).contains(status) else { return "status needs status: 400 to 599" }
            if let retryAfter, retryAfter < 0 { return "retryAfter must be 0 or more seconds" }
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

/// `*` and `?` globbing over bytes.
enum Glob {
    static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return text.isEmpty }
        switch first {
        case UInt8(ascii: "*"):
            let rest = pattern.dropFirst()
            var candidate = text
            while true {
                if matches(rest, candidate) { return true }
                guard !candidate.isEmpty else { return false }
                candidate = candidate.dropFirst()
            }
        case UInt8(ascii: "?"):
            return !text.isEmpty && matches(pattern.dropFirst(), text.dropFirst())
        default:
            return text.first == first && matches(pattern.dropFirst(), text.dropFirst())
        }
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
