import DeviceProtocol

/// A write's body as changes to a stored object: plain values, and Parse's field operations
/// `{"__op": "Increment" | "Add" | "AddUnique" | "Remove" | "Delete"}`. Checked against the class's
/// columns (a value of another type is Parse's 111) before anything is stored.
public struct ObjectChanges: Sendable {
    public enum Change: Equatable, Sendable {
        case set(JSONValue)
        case delete
        case increment(Double)
        case add([JSONValue])
        case addUnique([JSONValue])
        case remove([JSONValue])

        /// The column type the change needs; nil when any will do.
        var columnType: String? {
            switch self {
            case .set(let value): ParseValues.typeName(value)
            case .delete: nil
            case .increment: "Number"
            case .add, .addUnique, .remove: "Array"
            }
        }

        var isOperation: Bool { if case .set = self { false } else { true } }
    }

    public private(set) var changes: [String: Change]

    /// The largest `Increment` amount taken: 2^53, the largest whole number a JSON number holds exactly.
    public static let largestIncrement = 9_007_199_254_740_992.0

    /// Reads a body's fields. `objectId` is the server's and is dropped (a create that names one is
    /// refused before, with 105); `createdAt` and `updatedAt` are dropped when they are Parse dates and
    /// refused (111) when they are anything else; every other key must be a field name (105), and no key
    /// inside a value may hold `$` or `.` (121) or be `constructor` or `__proto__` (105).
    public init(body: [String: JSONValue]) throws(ParseFailure) {
        var changes: [String: Change] = [:]
        for key in body.keys.sorted() {
            let value = body[key]!
            switch key {
            case "objectId": continue
            case "createdAt", "updatedAt":
                guard let type = ParseValues.typeName(value), type != "Date" else { continue }
                throw .schemaMismatch(className: InstallationSchema.className, field: key, expected: "Date", got: type)
            default:
                try Self.checkKeys(key, value, nested: false)
                guard ParseKeys.isFieldName(key) || key == "ACL" else { throw .invalidFieldName(key) }
                changes[key] = try Self.change(value)
            }
        }
        self.changes = changes
    }

    /// Keys JavaScript would take for its own (`constructor`, `__proto__`) anywhere in a body, and `$` or
    /// `.` in the keys of a stored object's values (operators' own keys excepted).
    static func checkKeys(_ key: String, _ value: JSONValue, nested: Bool) throws(ParseFailure) {
        if key == "constructor" || key == "__proto__" {
            throw ParseFailure(code: 105, "Prohibited keyword in request data: {\"key\":\"\(key)\"}.")
        }
        if nested, key.contains("$") || key.contains(".") { throw .nestedKeys }
        switch value {
        case .object(let object):
            let isOperation = object["__op"] != nil
            for (inner, item) in object { try checkKeys(inner, item, nested: !isOperation) }
        case .array(let items):
            for item in items { try checkKeys("", item, nested: true) }
        default: break
        }
    }

    static func change(_ value: JSONValue) throws(ParseFailure) -> Change {
        guard case .object(let object) = value, case .string(let operation)? = object["__op"] else {
            return .set(value)
        }
        switch operation {
        case "Delete": return .delete
        case "Increment":
            guard case .number(let amount)? = object["amount"], amount.isFinite,
                abs(amount) <= ObjectChanges.largestIncrement
            else {
                throw .invalidJSON("incrementing must provide a number")
            }
            return .increment(amount)
        case "Add", "AddUnique", "Remove":
            guard case .array(let objects)? = object["objects"] else {
                throw .invalidJSON("objects to \(operation == "Remove" ? "remove" : "add") must be an array")
            }
            return operation == "Add"
                ? .add(objects) : operation == "AddUnique" ? .addUnique(objects) : .remove(objects)
        default:
            throw .operatorUnsupported(operation)
        }
    }

    /// Checks each change against the class's column types (given, or learnt from earlier writes).
    public func check(className: String, columns: [String: String]) throws(ParseFailure) {
        for key in changes.keys.sorted() {
            guard let expected = columns[key], expected != "ACL", let got = changes[key]!.columnType, got != expected
            else { continue }
            throw .schemaMismatch(className: className, field: key, expected: expected, got: got)
        }
    }

    /// The column types these changes give fields that have none yet.
    public func newColumns(beside columns: [String: String]) -> [String: String] {
        var added: [String: String] = [:]
        for (key, change) in changes where columns[key] == nil {
            if let type = change.columnType { added[key] = type }
        }
        return added
    }

    /// The object after the changes, and what the response carries back: the result of each field
    /// operation (the number after an `Increment`, the array after `Add`, `AddUnique` and `Remove`).
    public func applied(to object: [String: JSONValue]) -> (object: [String: JSONValue], results: [String: JSONValue]) {
        var object = object
        var results: [String: JSONValue] = [:]
        for (key, change) in changes {
            switch change {
            case .delete: object[key] = nil
            case .set(let value): object[key] = value
            case .increment(let amount):
                let current = object[key]?.numberValue ?? 0
                object[key] = .number(current + amount)
            case .add(let items):
                object[key] = .array((object[key]?.arrayValue ?? []) + items)
            case .addUnique(let items):
                // Sets, so that a long array costs its length, not its length squared.
                var array = object[key]?.arrayValue ?? []
                var present = Set(array)
                for item in items where present.insert(item).inserted { array.append(item) }
                object[key] = .array(array)
            case .remove(let items):
                let removed = Set(items)
                object[key] = .array((object[key]?.arrayValue ?? []).filter { !removed.contains($0) })
            }
            if change.isOperation, change != .delete { results[key] = object[key] }
        }
        return (object, results)
    }
}

/// `_Installation`'s columns (parse.md §1.4) and Parse's default ones.
public enum InstallationSchema {
    public static let className = "_Installation"
    public static let columns: [String: String] = [
        "objectId": "String", "createdAt": "Date", "updatedAt": "Date", "ACL": "ACL",
        "installationId": "String", "deviceToken": "String", "channels": "Array", "deviceType": "String",
        "pushType": "String", "GCMSenderId": "String", "timeZone": "String", "localeIdentifier": "String",
        "badge": "Number", "appVersion": "String", "appName": "String", "appIdentifier": "String",
        "parseVersion": "String",
    ]
}
