import Foundation
import JSONValues

/// An answer of Toxiproxy's API that is an error: its status and Toxiproxy's own words, sent as
/// `{"error":"…","status":N}` (with Go's `http.Error`: `text/plain`, a trailing newline).
public struct ToxiproxyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var status: Int

    public init(_ message: String, status: Int) {
        self.message = message
        self.status = status
    }

    public var description: String { message }

    package static func badBody(_ why: String) -> ToxiproxyError {
        ToxiproxyError("bad request body: \(why)", status: 400)
    }
    package static func missing(_ field: String) -> ToxiproxyError {
        ToxiproxyError("missing required field: \(field)", status: 400)
    }
    package static let proxyNotFound = ToxiproxyError("proxy not found", status: 404)
    package static let proxyExists = ToxiproxyError("proxy already exists", status: 409)
    package static let invalidStream = ToxiproxyError(
        "stream was invalid, can be either upstream or downstream", status: 400)
    package static let invalidToxicType = ToxiproxyError("invalid toxic type", status: 400)
    package static let toxicExists = ToxiproxyError("toxic already exists", status: 409)
    package static let toxicNotFound = ToxiproxyError("toxic not found", status: 404)

    /// The body Toxiproxy sends.
    public var body: String { "{\"error\":\(Toxic.quoted(message)),\"status\":\(status)}\n" }
}

extension JSONValue {
    /// The request body as one JSON value (a number is never a boolean).
    package static func parse(_ data: Data) throws(ToxiproxyError) -> JSONValue {
        guard !data.isEmpty else { throw .badBody("EOF") }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .badBody("the body is not JSON")
        }
    }
}

/// A JSON object as Go's decoder reads it into a struct: a key matches a field exactly, or else
/// ignoring case; keys no field has are ignored.
package struct GoObject {
    package let fields: [String: JSONValue]

    /// Parses `data` as one JSON object.
    package init(_ data: Data) throws(ToxiproxyError) {
        guard case .object(let object) = try JSONValue.parse(data) else { throw .badBody("expected a JSON object") }
        fields = object
    }

    package init(fields: [String: JSONValue]) { self.fields = fields }

    package subscript(_ key: String) -> JSONValue? {
        if let exact = fields[key] { return exact }
        return fields.first { $0.key.caseInsensitiveCompare(key) == .orderedSame }?.value
    }

    /// The value at `key` as `extract` reads it; nil when absent or null, a 400 saying `expected` when
    /// it is some other kind of value.
    private func value<T>(_ key: String, _ expected: String, _ extract: (JSONValue) -> T?) throws(ToxiproxyError)
        -> T?
    {
        guard let value = self[key], value != .null else { return nil }
        guard let typed = extract(value) else { throw .badBody("\(key) must be \(expected)") }
        return typed
    }

    package func string(_ key: String) throws(ToxiproxyError) -> String? {
        try value(key, "a string") { $0.stringValue }
    }

    package func bool(_ key: String) throws(ToxiproxyError) -> Bool? {
        try value(key, "true or false") { if case .bool(let flag) = $0 { flag } else { nil } }
    }

    package func number(_ key: String) throws(ToxiproxyError) -> Double? {
        try value(key, "a number") { $0.numberValue }
    }

    package func object(_ key: String) throws(ToxiproxyError) -> GoObject? {
        try value(key, "a JSON object") { $0.objectValue.map(GoObject.init(fields:)) }
    }
}

extension Toxic {
    /// A toxic from the JSON `POST /proxies/{proxy}/toxics` takes, with Toxiproxy's defaults.
    public static func decoding(_ data: Data) throws(ToxiproxyError) -> Toxic { try decode(data) }

    /// A toxic from `POST /proxies/{proxy}/toxics`, with Toxiproxy's defaults: `downstream`, toxicity 1,
    /// the name `<type>_<stream>`; attributes the type lacks are ignored and missing ones are 0.
    package static func decode(_ data: Data) throws(ToxiproxyError) -> Toxic {
        let object = try GoObject(data)
        // Left out, the stream is downstream (an http_status toxic's: upstream, the requests it
        // answers); given, it must be one of the two.
        let kind = ToxicKind(rawValue: try object.string("type") ?? "")
        let stream = try object.string("stream") ?? (kind == .httpStatus ? "upstream" : "downstream")
        guard let direction = ToxicStream(rawValue: stream.lowercased()) else { throw .invalidStream }
        guard let kind else { throw .invalidToxicType }
        // The requests are what http_status answers, the responses what http_cut cuts.
        if kind == .httpStatus, direction != .upstream {
            throw .badBody("an http_status toxic acts on requests: its stream is upstream")
        }
        if kind == .httpCut, direction != .downstream {
            throw .badBody("an http_cut toxic acts on responses: its stream is downstream")
        }
        var toxic = Toxic(
            name: try object.string("name").flatMap { $0.isEmpty ? nil : $0 }, kind: kind, stream: direction)
        if let toxicity = try object.number("toxicity") { toxic.toxicity = try Self.checkedToxicity(toxicity) }
        try toxic.merge(try object.object("attributes") ?? GoObject(fields: [:]))
        // Its name is a path segment too (`/proxies/{proxy}/toxics/{toxic}`): the proxies' rule.
        if let problem = ProxyRules.nameProblem(toxic.name) { throw ToxiproxyError(problem, status: 400) }
        return toxic
    }

    /// `POST|PATCH /proxies/{proxy}/toxics/{toxic}`: the attributes given replace those, the toxicity if given.
    package func updated(with data: Data) throws(ToxiproxyError) -> Toxic {
        let object = try GoObject(data)
        var toxic = self
        if let toxicity = try object.number("toxicity") { toxic.toxicity = try Self.checkedToxicity(toxicity) }
        if let attributes = try object.object("attributes") { try toxic.merge(attributes) }
        return toxic
    }

    private static func checkedToxicity(_ value: Double) throws(ToxiproxyError) -> Double {
        guard value.isFinite, (0...1).contains(value) else {
            throw .badBody("toxicity must be from 0 to 1, not \(value)")
        }
        return value
    }

    /// Reads the type's attributes from `attributes`, each a whole number in its range.
    private mutating func merge(_ attributes: GoObject) throws(ToxiproxyError) {
        for name in kind.attributeNames {
            guard let value = try attributes.number(name) else { continue }
            guard value.isFinite, value.rounded() == value else {
                throw .badBody("attributes.\(name) must be a whole number, not \(value)")
            }
            let range = kind.range(of: name)
            guard value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
                throw .badBody(
                    "attributes.\(name) of a \(kind.rawValue) toxic must be from \(range.lowerBound) to \(range.upperBound), not \(Int64(exactly: value).map(String.init) ?? "\(value)")"
                )
            }
            self.attributes[name] = Int64(value)
        }
        if kind == .bandwidth, self.attributes["rate"] == 0 {
            throw .badBody(
                "attributes.rate of a bandwidth toxic must be from 1 to \(kind.range(of: "rate").upperBound), not 0")
        }
        if kind == .httpStatus, self.attributes["status"] == 0 {
            throw .badBody("attributes.status of an http_status toxic must be from 100 to 599, not 0")
        }
    }

    /// Toxiproxy's JSON for the toxic, fields in its order.
    package var json: String {
        let attributes = kind.attributeNames.map { "\"\($0)\":\(self[$0])" }.joined(separator: ",")
        return "{\"attributes\":{\(attributes)},\"name\":\(Self.quoted(name)),\"type\":\"\(kind.rawValue)\","
            + "\"stream\":\"\(stream.rawValue)\",\"toxicity\":\(Self.number(toxicity))}"
    }

    package static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
    }

    package static func quoted(_ text: String) -> String {
        let data =
            (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes]))
            ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
