import DeviceProtocol

/// What Parse Server answers when it refuses a request: a Parse error `{"code": N, "error": "…"}` with the
/// HTTP status `handleParseErrors` gives it (500 for code 1, 404 for 101, 400 for every other code), or
/// an error without a code (`{"error": "…"}`) for the refusals that carry their own status, such as 403
/// `unauthorized`. The texts are Parse Server's own (docs/parse.md lists them).
public struct ParseFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public var status: Int
    public var code: Int?
    public var message: String

    public init(code: Int, _ message: String) {
        self.code = code
        self.message = message
        status =
            switch code {
            case 1: 500
            case 101: 404
            default: 400
            }
    }

    /// A refusal with its own HTTP status and no Parse code.
    public init(status: Int, _ message: String) {
        self.status = status
        self.code = nil
        self.message = message
    }

    /// The response body: `{"code":N,"error":"…"}`, or `{"error":"…"}` without a code.
    public var body: JSONValue {
        guard let code else { return ["error": .string(message)] }
        return ["code": .number(Double(code)), "error": .string(message)]
    }

    public var description: String { code.map { "\($0) \(message)" } ?? "\(status) \(message)" }
}

extension ParseFailure {
    public static let unauthorized = ParseFailure(status: 403, "unauthorized")
    public static let masterKeyRequired = ParseFailure(status: 403, "unauthorized: master key is required")
    public static let objectNotFound = ParseFailure(code: 101, "Object not found.")
    public static let objectNotFoundForUpdate = ParseFailure(code: 101, "Object not found for update.")

    public static func invalidQuery(_ message: String) -> ParseFailure { ParseFailure(code: 102, message) }
    public static func invalidKeyName(_ key: String) -> ParseFailure {
        ParseFailure(code: 105, "Invalid key name: \(key)")
    }
    /// 105 for a field a write names: a letter, then letters, digits and underscores.
    public static func invalidFieldName(_ key: String) -> ParseFailure {
        ParseFailure(code: 105, "Invalid field name: \(key).")
    }
    public static func invalidJSON(_ message: String) -> ParseFailure { ParseFailure(code: 107, message) }
    /// A body that is not JSON: Parse Server's body parser answers 400 with no code.
    public static func malformedBody(_ message: String) -> ParseFailure { ParseFailure(status: 400, message) }
    public static func badConstraint(_ name: String) -> ParseFailure {
        ParseFailure(code: 107, "bad constraint: \(name)")
    }
    public static func operatorUnsupported(_ name: String) -> ParseFailure {
        ParseFailure(code: 108, "The \(name) operator is not supported yet.")
    }
    /// 111: a field given a value of another type than its column's.
    public static func schemaMismatch(className: String, field: String, expected: String, got: String)
        -> ParseFailure
    {
        ParseFailure(code: 111, "schema mismatch for \(className).\(field); expected \(expected) but got \(got)")
    }
    public static func incorrectType(_ message: String) -> ParseFailure { ParseFailure(code: 111, message) }
    public static func pushMisconfigured(_ message: String) -> ParseFailure { ParseFailure(code: 115, message) }
    /// 119: what a caller without the master key may not do to a class.
    public static func forbidden(_ operation: String, on collection: String) -> ParseFailure {
        ParseFailure(
            code: 119, "Clients aren't allowed to perform the \(operation) operation on the \(collection) collection.")
    }
    public static let nestedKeys = ParseFailure(code: 121, "Nested keys should not contain the '$' or '.' characters")
    public static let deviceTokenMatchesSeveral = ParseFailure(
        code: 132, "Must specify installationId when deviceToken matches multiple Installation objects")
    public static let missingIdField = ParseFailure(
        code: 135, "at least one ID field (deviceToken, installationId) must be specified in this operation")
    public static let missingDeviceType = ParseFailure(code: 135, "deviceType must be specified in this operation")
    public static func immutable(_ field: String) -> ParseFailure {
        ParseFailure(code: 136, "\(field) may not be changed in this operation")
    }
}
