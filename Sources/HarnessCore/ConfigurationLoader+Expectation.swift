import Foundation
import HarnessTimeline

/// A scenario's `expect` block and the event patterns steps and expectations share.
extension ConfigurationLoader {
    static func readPattern(_ reader: YAMLReader) throws -> EventPattern {
        if case .scalar = reader.node { return try known(EventPattern(kind: try reader.string()), reader) }
        let entries = try reader.namedEntries()
        guard entries.count == 1, let (kind, attributes) = entries.first else {
            throw reader.error("write an event as its kind, or as 'kind: {attribute: value}'")
        }
        return try known(EventPattern(kind: kind, attributes: try readAttributes(attributes)), reader)
    }

    /// `pattern`, when its kind is in the event catalogue and each attribute it matches is one events of
    /// that kind can carry (or `device`, which a scenario's named devices give every event of theirs): a
    /// pattern that can never match is a check that can never fail. Otherwise the nearest names.
    static func known(_ pattern: EventPattern, _ reader: YAMLReader) throws -> EventPattern {
        guard let spec = EventCatalogue.spec(for: EventKind(pattern.kind)) else {
            let near = NearestNames.suggestion(for: pattern.kind, among: EventCatalogue.all.map(\.kind.rawValue))
            throw reader.error(
                "'\(pattern.kind.prefix(100))' is no event kind\(near.map { " (\($0))" } ?? ""); "
                    + "docs/event-kinds.md lists them ('harness list --events')")
        }
        let attributes = spec.attributes + spec.optional + ["device"]
        for key in pattern.attributes.keys.sorted() where !attributes.contains(key) {
            let near = NearestNames.suggestion(for: key, among: attributes).map { " (\($0))" } ?? ""
            throw reader.error(
                "\(pattern.kind) has no attribute '\(key.prefix(100))'\(near); it has "
                    + attributes.joined(separator: ", "))
        }
        return pattern
    }

    static func readAttributes(_ reader: YAMLReader) throws -> [String: AttributeMatch] {
        let matches = KeyTable<AttributeMatch?>([
            "sha256OfFixture": { $1 = .sha256OfFixture(try $0.string()) },
            "contains": { $1 = .contains(try $0.string()) },
            "json": { json, match in
                guard case .mapping = json.node else {
                    throw json.error("write the keys the JSON object must hold, as {json: {photoTitle: Nebula}}")
                }
                match = .json(try readJSONSubset(json))
            },
        ])
        var result: [String: AttributeMatch] = [:]
        for (key, value) in try reader.namedEntries() {
            guard case .mapping = value.node else {
                result[key] = .equals(try value.string())
                continue
            }
            var match: AttributeMatch?
            guard try matches.read(value, into: &match).count == 1, let match else {
                throw value.error(
                    "write {sha256OfFixture: photos/dailyphoto.jpg}, {contains: text} or {json: {key: value}}")
            }
            result[key] = match
        }
        return result
    }

    static func readJSONSubset(_ reader: YAMLReader) throws -> JSONSubset {
        if case .mapping = reader.node {
            return .object(try reader.namedEntries().map { (key: $0.0, value: try readJSONSubset($0.1)) })
        }
        return .scalar(try reader.string())
    }

    /// - Parameter devices: the scenario's named devices, which `files:` may name.
    static func readExpectation(_ reader: YAMLReader, devices: [String] = []) throws -> Expectation {
        try KeyTable<Expectation>([
            "chain": { $1.chain = try $0.sequence().map(readPattern) },
            "eventually": { $1.eventually = try $0.sequence().map(readPattern) },
            "never": { $1.never = try $0.sequence().map(readPattern) },
            "counts": { $1.counts = try $0.sequence().map(readCount) },
            "files": { $1.files = try $0.sequence().map { try readFile($0, devices: devices) } },
            "within": { $1.within = try $0.duration() },
            "settle": { $1.settle = try $0.duration() },
        ]).overlay(reader, on: Expectation())
    }

    static func readCount(_ item: YAMLReader) throws -> CountExpectation {
        typealias Fields = (event: String?, attributes: [String: AttributeMatch], exact: Int?, low: Int?, high: Int?)
        var fields: Fields = (nil, [:], nil, nil, nil)
        try KeyTable<Fields>([
            "event": { $1.event = try $0.string() },
            "where": { $1.attributes = try readAttributes($0) },
            "count": { $1.exact = try $0.int(range: 0...1_000_000) },
            "atLeast": { $1.low = try $0.int(range: 0...1_000_000) },
            "atMost": { $1.high = try $0.int(range: 0...1_000_000) },
        ]).read(item, into: &fields)
        guard let event = fields.event else { throw item.error("a count needs an 'event'") }
        let pattern = try known(EventPattern(kind: event, attributes: fields.attributes), item)
        if let exact = fields.exact {
            guard fields.low == nil, fields.high == nil else {
                throw item.error("a count has either 'count' or 'atLeast'/'atMost'")
            }
            return CountExpectation(pattern: pattern, atLeast: exact, atMost: exact)
        }
        guard fields.low != nil || fields.high != nil else {
            throw item.error("a count needs 'count', 'atLeast' or 'atMost'")
        }
        let low = fields.low ?? 0
        if let high = fields.high, high < low { throw item.error("atMost (\(high)) is below atLeast (\(low))") }
        return CountExpectation(pattern: pattern, atLeast: low, atMost: fields.high)
    }

    static func readFile(_ item: YAMLReader, devices: [String]) throws -> FileExpectation {
        var file = FileExpectation(path: "", sha256OfFixture: nil)
        let found = try KeyTable<FileExpectation>([
            "path": { $1.path = try $0.relativePath() },
            "sha256OfFixture": { $1.sha256OfFixture = try $0.relativePath() },
            "device": { value, file in
                let name = try value.string()
                guard devices.contains(name) else {
                    throw value.error(
                        devices.isEmpty
                            ? "'device' names one of the scenario's devices, and this scenario declares none"
                            : "no device named '\(name)' in this scenario; devices: \(devices.joined(separator: ", "))")
                }
                file.device = name
            },
        ]).read(item, into: &file)
        guard found.contains("path") else { throw item.error("a file expectation needs a 'path'") }
        return file
    }
}
