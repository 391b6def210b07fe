import Foundation

/// What a resource's validators are: the strong ETag, the modification time and the length. A served
/// file has all three; an answer replayed from a cassette has what was recorded, perhaps neither
/// validator, and then no condition on one can hold.
public struct ResourceValidators: Sendable, Equatable {
    /// A strong entity tag, quotes included: `"9a3e0c1f"`.
    public var etag: String?
    public var lastModified: Date?
    public var length: Int

    public init(etag: String?, lastModified: Date?, length: Int) {
        self.etag = etag
        self.lastModified = lastModified
        self.length = length
    }
}

/// How a GET or HEAD is answered once its preconditions (RFC 9110 §13.2.2, in that order) and its
/// range are weighed. Pure, so every rule has a unit test; the server only carries it out.
public enum MediaAnswer: Equatable, Sendable {
    case full
    case partial(ClosedRange<Int>)
    case multiple([ClosedRange<Int>])
    case notModified
    case preconditionFailed
    case rangeNotSatisfiable

    /// - Parameters:
    ///   - isGet: `Range` is defined for GET only; a HEAD gets the headers of the whole resource.
    ///   - header: the request's header value by lowercase name.
    public static func decide(
        isGet: Bool, validators: ResourceValidators, header: (String) -> String?
    ) -> MediaAnswer {
        // Without a modification time the date conditions are ignored (RFC 9110 §13.1.3, §13.1.4).
        let modified = validators.lastModified?.wholeSeconds
        // 1. If-Match: strong comparison; 2. otherwise If-Unmodified-Since.
        if let ifMatch = header("if-match") {
            guard
                ifMatch.trimmingCharacters(in: .whitespaces) == "*"
                    || EntityTagList(ifMatch).tags.contains(where: { !$0.weak && $0.quoted == validators.etag })
            else { return .preconditionFailed }
        } else if let value = header("if-unmodified-since"), let modified, let date = HTTPDate.parse(value),
            modified > date
        {
            return .preconditionFailed
        }
        // 3. If-None-Match: weak comparison; 4. otherwise If-Modified-Since.
        if let ifNoneMatch = header("if-none-match") {
            if ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*"
                || EntityTagList(ifNoneMatch).tags.contains(where: { $0.quoted == validators.etag })
            {
                return .notModified
            }
        } else if let value = header("if-modified-since"), let modified, let date = HTTPDate.parse(value),
            modified <= date
        {
            return .notModified
        }
        // 5. If-Range, then Range.
        guard isGet, let range = header("range") else { return .full }
        if let ifRange = header("if-range")?.trimmingCharacters(in: .whitespaces) {
            let holds: Bool
            if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
                // Only a strong tag can hold, and only the current one.
                holds = EntityTagList(ifRange).tags.first.map { !$0.weak && $0.quoted == validators.etag } ?? false
            } else {
                // A date holds only when it is exactly the last modification.
                holds = modified != nil && HTTPDate.parse(ifRange) == modified
            }
            if !holds { return .full }
        }
        switch ByteRangeRequest(header: range, length: validators.length) {
        case .whole: return .full
        case .partial(let bytes): return .partial(bytes)
        case .multiple(let ranges): return .multiple(ranges)
        case .unsatisfiable: return .rangeNotSatisfiable
        }
    }
}

/// The entity tags of an `If-Match`, `If-None-Match` or `If-Range` value: `"a", W/"b"`. A value that
/// stops parsing keeps the tags read before it.
struct EntityTagList {
    struct Tag: Equatable {
        var weak: Bool
        /// The opaque tag with its quotes, as an `ETag` header writes it.
        var quoted: String
    }

    var tags: [Tag] = []

    init(_ value: String) {
        var rest = Substring(value)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { return }
            var weak = false
            if rest.hasPrefix("W/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else { return }
            tags.append(Tag(weak: weak, quoted: String(rest[...close])))
            rest = rest[rest.index(after: close)...]
        }
    }
}

extension Date {
    /// HTTP dates carry whole seconds, so comparisons with them drop the fraction.
    var wholeSeconds: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
