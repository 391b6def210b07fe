import Foundation
import HarnessTimeline
import Yams

/// Strict reading of harness.yml: every mapping declares the keys it knows, and anything else, or a
/// value of the wrong kind, is a ``ConfigurationError`` naming file, line and key path.
struct YAMLReader {
    let file: String
    let node: Node
    let path: String

    func error(_ message: String, at node: Node? = nil, path: String? = nil) -> ConfigurationError {
        let mark = (node ?? self.node).mark
        return ConfigurationError(
            file: file, line: mark?.line, column: mark?.column, keyPath: path ?? self.path, message: message)
    }

    func child(_ key: String, _ node: Node) -> YAMLReader {
        YAMLReader(file: file, node: node, path: path.isEmpty ? key : "\(path).\(key)")
    }

    /// The mapping's entries, after checking that every key is one of `known`.
    func mapping(known: Set<String>) throws -> [String: YAMLReader] {
        guard let mapping = node.mapping else { throw error("expected a mapping") }
        var result: [String: YAMLReader] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else { throw error("keys must be strings", at: keyNode) }
            guard known.contains(key) else {
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                throw error(
                    "unknown key '\(key)'; known keys here: \(known.sorted().joined(separator: ", "))",
                    at: keyNode, path: childPath)
            }
            result[key] = child(key, value)
        }
        return result
    }

    /// A mapping whose keys are names chosen by the user (apps, scenarios).
    func namedEntries() throws -> [(String, YAMLReader)] {
        guard let mapping = node.mapping else { throw error("expected a mapping") }
        return try mapping.map { keyNode, value in
            guard let key = keyNode.string else { throw error("keys must be strings", at: keyNode) }
            return (key, child(key, value))
        }
    }

    /// A name that also names files and folders (a scenario's report folder): letters, digits, `.`,
    /// `_` and `-`, not starting with `.`, at most 100 characters.
    static func problem(withName name: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                || "._-".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= 100, allowed, !name.hasPrefix(".") else {
            return
                "'\(name)' cannot be used as a name: use letters, digits, '.', '_' and '-' (not starting with '.'), at most 100"
        }
        return nil
    }

    /// An Apple team or key id, which also names the `.p8` file: 1 to 32 letters and digits (Apple's
    /// are 10).
    func identifier() throws -> String {
        let text = try string()
        guard (1...32).contains(text.count),
            text.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            throw error("expected 1 to 32 letters and digits, as Apple's team and key ids are (10), found '\(text)'")
        }
        return text
    }

    /// A duration of at most `limit`.
    func duration(atMost limit: Duration) throws -> Duration {
        let value = try duration()
        guard value <= limit else { throw error("at most \(limit) here, found '\(try string())'") }
        return value
    }

    /// A path inside the app's container or the media root: relative, without `..`.
    func relativePath() throws -> String {
        let text = try string()
        guard !text.isEmpty, !text.hasPrefix("/"), !text.split(separator: "/").contains("..") else {
            throw error("expected a relative path without '..', found '\(text)'")
        }
        return text
    }

    func sequence() throws -> [YAMLReader] {
        guard let sequence = node.sequence else { throw error("expected a list") }
        return sequence.enumerated().map { index, item in
            YAMLReader(file: file, node: item, path: "\(path)[\(index)]")
        }
    }

    func string() throws -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a string") }
        return scalar.string
    }

    func strings() throws -> [String] { try sequence().map { try $0.string() } }

    func int(range: ClosedRange<Int>? = nil) throws -> Int {
        guard let value = node.int else { throw error("expected an integer, found '\(node.string ?? "a collection")'") }
        if let range, !range.contains(value) {
            throw error("must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    func port() throws -> Int { try int(range: 0...65535) }

    /// `null`, or what `read` makes of the value.
    func nullOr<Value>(_ read: (YAMLReader) throws -> Value) throws -> Value? {
        node.null != nil ? nil : try read(self)
    }

    /// A duration of at most `limit` (which fits an `Int` of milliseconds), in milliseconds.
    func milliseconds(atMost limit: Duration) throws -> Int { Int(try duration(atMost: limit) / .milliseconds(1)) }

    /// `true` or `false` (YAML 1.2's spellings only: `yes`/`on` are refused, as they are ambiguous).
    func bool() throws -> Bool {
        switch try string() {
        case "true": return true
        case "false": return false
        case let other: throw error("expected true or false, found '\(other)'")
        }
    }

    /// A number from 0 to 1.
    func fraction() throws -> Double {
        guard let value = Double(try string().trimmingCharacters(in: .whitespaces)), (0...1).contains(value) else {
            throw error("expected a number from 0 to 1, found '\(node.string ?? "a collection")'")
        }
        return value
    }

    /// The longest duration harness.yml takes: a year (the longest default, APNs's storage, is 30 days).
    static let longestDuration: Double = 366 * 86_400

    /// `30s`, `500ms`, `2m`, or a number of seconds; at most a year.
    func duration() throws -> Duration {
        let text = try string().trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var seconds: Double?
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let number = Double(text.dropLast(suffix.count)) { seconds = number * factor }
            break
        }
        if seconds == nil { seconds = Double(text) }
        guard let seconds, seconds.isFinite, seconds >= 0 else {
            throw error("expected a duration such as 30s, 500ms, 2m, 1h or 7d, found '\(text)'")
        }
        guard seconds <= Self.longestDuration else { throw error("a duration is at most 366d, not '\(text)'") }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Downlink rates of Apple's Network Link Conditioner profiles (bytes per second; faults.md §3.1)
    /// and OHHTTPStubs' GPRS, usable by name wherever a rate is.
    static let ratePresets: [(name: String, bytesPerSecond: Int)] = [
        ("GPRS", 7_000), ("EDGE", 30_000), ("3G", 97_500), ("Very Bad Network", 125_000), ("DSL", 250_000),
        ("WiFi", 5_000_000), ("LTE", 6_250_000),
    ]

    /// `100KB/s`, `1.5MB/s`, `64KiB/s`, bytes per second as an integer, or a Network Link Conditioner
    /// profile's name (`3G`, `EDGE`, …).
    func rate() throws -> Int {
        let raw = try string().trimmingCharacters(in: .whitespaces)
        if let preset = Self.ratePresets.first(where: { $0.name.lowercased() == raw.lowercased() }) {
            return preset.bytesPerSecond
        }
        let text = raw.replacingOccurrences(of: " ", with: "")
        let most = InputBounds.bytesPerSecond.upperBound
        if let bytes = Int(text), bytes > 0 {
            guard bytes <= most else { throw error("a rate is at most \(most) bytes per second, not '\(raw)'") }
            return bytes
        }
        let units: [(String, Double)] = [
            ("KiB/s", 1024), ("MiB/s", 1024 * 1024), ("KB/s", 1000), ("MB/s", 1_000_000), ("B/s", 1),
        ]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let number = Double(text.dropLast(suffix.count)), number > 0, number.isFinite {
                guard number * factor <= Double(most) else {
                    throw error("a rate is at most \(most) bytes per second, not '\(raw)'")
                }
                return max(1, Int(number * factor))
            }
        }
        let presets = Self.ratePresets.map(\.name).joined(separator: ", ")
        throw error(
            "expected a rate such as 100KB/s, 2MB/s, a number of bytes per second, or a profile (\(presets)), found '\(raw)'"
        )
    }

    /// Any YAML value as JSON (for push payloads and where-queries).
    func json() throws -> Any {
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                if let int = node.int { return int }
                if let double = node.float { return double }
                if let bool = node.bool { return bool }
                if node.null != nil { return NSNull() }
            }
            return scalar.string
        case .mapping:
            var object: [String: Any] = [:]
            for (key, value) in try namedEntries() { object[key] = try value.json() }
            return object
        case .sequence:
            return try sequence().map { try $0.json() }
        case .alias:
            throw error("YAML aliases are not supported here")
        }
    }
}
