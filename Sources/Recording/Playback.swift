import Foundation

/// What recording does with requests, as vcrpy (and Ruby's VCR) define the modes.
public enum RecordMode: String, Sendable, CaseIterable {
    /// Replay; record only when the cassette does not exist yet.
    case once
    /// Replay what is recorded; pass new requests through and record them.
    case newEpisodes = "new_episodes"
    /// Replay only; a request the cassette lacks gets the "not recorded" answer.
    case none
    /// Pass every request through and record it; never replay.
    case all
}

/// Which parts of a request must agree for a recorded answer to be played back for it.
public struct RequestMatching: Sendable, Equatable {
    public enum Field: String, Sendable, CaseIterable {
        case method, host, path, query
    }

    /// By default the host is not compared: a recording's hosts are mapped onto the media server.
    public var fields: Set<Field> = [.method, .path, .query]
    /// Headers that change the answer, compared by value (lower-cased names).
    public var headers: [String] = [
        "range", "if-range", "if-none-match", "if-match", "if-modified-since", "if-unmodified-since",
    ]

    public init() {}

    /// The part of a request that matching looks at.
    struct Key: Equatable {
        var method: String?
        var host: String?
        var path: String?
        var query: [String]?
        var headers: [String: String]
    }

    func key(method: String, url: String, headers: [(name: String, value: String)]) -> Key {
        let components = URLComponents(string: url)
        var selected: [String: String] = [:]
        for header in headers {
            let name = header.name.lowercased()
            if self.headers.contains(name), selected[name] == nil { selected[name] = header.value }
        }
        return Key(
            method: fields.contains(.method) ? method.uppercased() : nil,
            host: fields.contains(.host) ? components?.host?.lowercased() : nil,
            path: fields.contains(.path) ? (components?.percentEncodedPath).map { $0.isEmpty ? "/" : $0 } : nil,
            query: fields.contains(.query)
                ? (components?.percentEncodedQuery ?? "").split(separator: "&").map(String.init).sorted() : nil,
            headers: selected)
    }
}

/// Decides, request by request, which recorded entry answers: the first not yet played that matches,
/// in recorded order; once every match has played, the last of them again (a client that asks twice
/// gets the same answer). A value: the server keeps it behind a lock and does the I/O.
public struct Playback: Sendable {
    /// The answer to one request.
    public enum Answer: Sendable, Equatable {
        /// The entry at this index of the HAR's entries.
        case entry(Int)
        /// The entry at this index, a whole `200` recorded for a request without a `Range`, for a GET
        /// with a `Range` that nothing recorded answers: the server cuts the range from it by its own
        /// rules, as a real server would (RFC 9110 §14).
        case cut(Int)
        /// Nothing recorded matches; the nearest recorded request, in words, when there is one.
        case notRecorded(nearest: String?)
    }

    private let matching: RequestMatching
    private let keys:
        [(index: Int, key: RequestMatching.Key, display: String, path: String, whole: Bool, body: String?)]
    private var played: Set<Int> = []

    /// - Parameter service: only entries recorded for this service (`media`), and entries without a
    ///   service (another tool's HAR); nil for all.
    public init(entries: [HAR.Entry], matching: RequestMatching = RequestMatching(), service: String? = nil) {
        self.matching = matching
        keys = entries.enumerated().compactMap { index, entry in
            if let service, let recorded = entry.service, recorded != service { return nil }
            guard Self.answers(entry) else { return nil }
            let headers = entry.request.headers.map { (name: $0.name, value: $0.value) }
            let display =
                "\(entry.request.method) \(Self.target(of: entry.request.url))"
                + headers.filter { matching.headers.contains($0.name.lowercased()) }
                .map { " \($0.name): \($0.value)" }.joined()
            // Whole: a 200 to a GET, its body kept (a HAR saved without bodies has none to cut from).
            let content = entry.response.content
            let whole =
                entry.response.status == 200 && entry.fault == nil && (entry.applied ?? []).isEmpty
                && entry.request.method.uppercased() == "GET"
                && (content.text != nil || content.file != nil || content.size == 0)
                && !headers.contains { $0.name.lowercased() == "range" }
            return (
                index, matching.key(method: entry.request.method, url: entry.request.url, headers: headers), display,
                URLComponents(string: entry.request.url)?.percentEncodedPath ?? "", whole, entry.request.postData?.text
            )
        }
    }

    /// How many entries can answer.
    public var count: Int { keys.count }

    /// Whether an entry has an answer to give: not a flow that failed (mitmproxy's status 0), unless it
    /// is our record of a connection closed on purpose before any status line; not an informational 1xx.
    static func answers(_ entry: HAR.Entry) -> Bool {
        entry.response.status >= 200 || entry.response.status == 0 && entry.fault != nil
    }

    /// The entries that can never answer, each in words naming it: a flow that failed before any answer
    /// (status 0, as mitmproxy writes one) and an informational (1xx) answer. They count as not recorded.
    public static func skipped(entries: [HAR.Entry], service: String? = nil) -> [String] {
        entries.enumerated().compactMap { index, entry in
            if let service, let recorded = entry.service, recorded != service { return nil }
            let status = entry.response.status
            guard !answers(entry) else { return nil }
            let why =
                status == 0
                ? "the flow failed before any answer (status 0)" : "an informational answer (\(status)) is no answer"
            // What a file says goes to a terminal: no control character of its own.
            let said = "\(entry.request.method.prefix(20)) \(entry.request.url.prefix(200))".unicodeScalars.map {
                $0.properties.generalCategory == .control ? "?" : String($0)
            }.joined()
            return "entry \(index) (\(said)): \(why); it counts as not recorded"
        }
    }

    /// The entry that answers `method` on `target` (a path with its query) with `headers`.
    ///
    /// - Parameter body: the request's body, for requests that differ only there (a backend's
    ///   `POST /api.php` with its command in a form): among the matches not yet played, the one whose
    ///   recorded body agrees most with it (``BodyLikeness``), the first in recorded order on a tie.
    public mutating func answer(
        method: String, target: String, headers: [(name: String, value: String)], body: String? = nil
    ) -> Answer {
        var key = matching.key(method: method, url: "http://recorded" + target, headers: headers)
        // `Range` is defined for GET alone: a HEAD's is no part of what it asks.
        if method.uppercased() == "HEAD" {
            key.headers["range"] = nil
            key.headers["if-range"] = nil
        }
        let ranged = method.uppercased() == "GET" && headers.contains { $0.name.lowercased() == "range" }
        let matches = keys.filter { $0.key == key }
        guard !matches.isEmpty else {
            // A range of something recorded whole: the whole answer, to cut the range from.
            if ranged {
                var bare = key
                bare.headers["range"] = nil
                bare.headers["if-range"] = nil
                if let whole = keys.first(where: { $0.whole && $0.key == bare }) { return .cut(whole.index) }
            }
            return .notRecorded(nearest: nearest(to: target))
        }
        let unplayed = matches.filter { !played.contains($0.index) }
        var chosen = unplayed.first ?? matches[matches.count - 1]
        if let body, unplayed.count > 1 {
            var best = BodyLikeness.score(chosen.body, body)
            for candidate in unplayed.dropFirst() {
                let score = BodyLikeness.score(candidate.body, body)
                if score > best { (chosen, best) = (candidate, score) }
            }
        }
        played.insert(chosen.index)
        // Matching that does not compare `Range` found a whole answer: the range is still cut from it.
        return ranged && chosen.whole ? .cut(chosen.index) : .entry(chosen.index)
    }

    /// The recorded request most like one to `target`: the same path if there is one, else the path
    /// sharing the longest beginning with it.
    private func nearest(to target: String) -> String? {
        let path = URLComponents(string: "http://recorded" + target)?.percentEncodedPath ?? target
        if let same = keys.first(where: { $0.path == path }) { return same.display }
        func shared(_ other: String) -> Int { zip(other.utf8, path.utf8).prefix { $0 == $1 }.count }
        return keys.max { shared($0.path) < shared($1.path) }?.display
    }

    static func target(of url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }
}

/// How much a recorded request body agrees with a new one: the same bytes score highest; form bodies
/// (`a=1&b=2`) score one per `name=value` pair they share, so that `cmd=join&name=Alice&udid=…` finds
/// Alice's recorded JOIN though the udid is new; anything else scores nothing.
public enum BodyLikeness {
    public static func score(_ recorded: String?, _ body: String) -> Int {
        guard let recorded else { return 0 }
        if recorded == body { return Int.max }
        guard recorded.contains("="), body.contains("=") else { return 0 }
        // Bounded: a huge body is compared by its first pairs, and only those are split off.
        let mine = Set(recorded.utf8.lazy.split(separator: UInt8(ascii: "&")).prefix(256))
        return body.utf8.lazy.split(separator: UInt8(ascii: "&")).prefix(256).reduce(0) {
            $0 + (mine.contains($1) ? 1 : 0)
        }
    }
}

extension RequestMatching {
    /// The most header names a matching compares, and the longest name.
    public static let headerLimit = (count: 32, length: 100)

    /// Matching as a user writes it: `fields` a comma-separated list of `method`, `host`, `path` and
    /// `query`; `headers` a comma-separated list of header names (empty for none). Nil keeps the default.
    ///
    /// - Throws: ``RequestMatchingError`` saying which value is wrong and what is allowed.
    public init(fields: String?, headers: String?) throws(RequestMatchingError) {
        self.init()
        if let fields {
            var chosen: Set<Field> = []
            for name in fields.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
                guard let field = Field(rawValue: trimmed) else {
                    throw .unknownField(String(trimmed.prefix(40)))
                }
                chosen.insert(field)
            }
            self.fields = chosen
        }
        if let headers {
            let names = headers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty }
            guard names.count <= Self.headerLimit.count else {
                throw .tooManyHeaders(names.count)
            }
            let token = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~")
            for name in names where name.count > Self.headerLimit.length || !name.allSatisfy(token.contains) {
                throw .notAHeaderName(String(name.prefix(40)))
            }
            self.headers = names
        }
    }
}

/// A matching setting that cannot be used.
public enum RequestMatchingError: Error, CustomStringConvertible, Equatable {
    /// Not one of ``RequestMatching/Field`` (its first 40 characters).
    case unknownField(String)
    /// More header names than ``RequestMatching/headerLimit`` allows.
    case tooManyHeaders(Int)
    /// Not a header name (its first 40 characters).
    case notAHeaderName(String)

    public var description: String {
        switch self {
        case .unknownField(let name):
            "'\(name)' is not a part of a request to match on; use a comma list of "
                + RequestMatching.Field.allCases.map(\.rawValue).joined(separator: ", ")
        case .tooManyHeaders(let count): "at most \(RequestMatching.headerLimit.count) headers, not \(count)"
        case .notAHeaderName(let name): "'\(name)' is not a header name"
        }
    }
}
