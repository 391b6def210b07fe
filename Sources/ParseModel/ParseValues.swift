import DeviceProtocol

/// How Parse compares, orders and names the types of JSON values, as its MongoDB adapter does.
public enum ParseValues {
    public enum Ordering { case less, same, greater }

    /// Equality as a query means it: an array field equals a value it contains (and an array equal to
    /// it), `null` equals a missing field, and a `{"__type":"Date"}` equals the ISO string it holds.
    public static func equal(_ value: JSONValue?, _ expected: JSONValue) -> Bool {
        let expected = comparable(expected)
        guard let value = value.map(comparable) else { return expected == .null }
        if value == expected { return true }
        if case .array(let items) = value { return items.contains { comparable($0) == expected } }
        return false
    }

    /// `$lt` and friends: numbers with numbers and strings (and dates) with strings; values of other
    /// types never compare. An array field compares when any element does.
    static func compare(_ value: JSONValue?, _ bound: JSONValue, _ accepted: Set<Ordering>) -> Bool {
        guard let value = value.map(comparable) else { return false }
        let bound = comparable(bound)
        if case .array(let items) = value {
            return items.contains { compare($0, bound, accepted) }
        }
        switch (value, bound) {
        case (.number(let a), .number(let b)): return accepted.contains(a < b ? .less : a == b ? .same : .greater)
        case (.string(let a), .string(let b)): return accepted.contains(a < b ? .less : a == b ? .same : .greater)
        default: return false
        }
    }

    /// The order `order=` sorts by: missing and null first, then numbers, strings, objects, arrays and
    /// booleans (MongoDB's order of types), each type by its value.
    public static func order(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Ordering {
        let a = comparable(lhs ?? .null)
        let b = comparable(rhs ?? .null)
        let (rankA, rankB) = (rank(a), rank(b))
        if rankA != rankB { return rankA < rankB ? .less : .greater }
        switch (a, b) {
        case (.number(let x), .number(let y)): return x < y ? .less : x == y ? .same : .greater
        case (.string(let x), .string(let y)): return x < y ? .less : x == y ? .same : .greater
        case (.bool(let x), .bool(let y)): return x == y ? .same : (!x ? .less : .greater)
        default:
            let (x, y) = (a.jsonString(), b.jsonString())
            return x < y ? .less : x == y ? .same : .greater
        }
    }

    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .null: 0
        case .number: 1
        case .string: 2
        case .object: 3
        case .array: 4
        case .bool: 5
        }
    }

    /// A `{"__type":"Date","iso":…}` value as the ISO string Parse stores `createdAt` and `updatedAt` as;
    /// every other value as it is.
    static func comparable(_ value: JSONValue) -> JSONValue {
        if case .object(let object) = value, object["__type"] == "Date", let iso = object["iso"]?.stringValue {
            return .string(iso)
        }
        return value
    }

    /// JavaScript's truthiness, which Parse Server reads `count` and `$exists` by.
    public static func truthy(_ value: JSONValue) -> Bool {
        switch value {
        case .null: false
        case .bool(let flag): flag
        case .number(let number): number != 0 && !number.isNaN
        case .string(let text): !text.isEmpty
        case .array, .object: true
        }
    }

    /// The type name Parse's schema uses for a value: `String`, `Number`, `Boolean`, `Array`, `Object`,
    /// or the `__type` of a Parse type (`Date`, `Pointer`, `File`, `GeoPoint`, `Bytes`, `Relation`).
    public static func typeName(_ value: JSONValue) -> String? {
        switch value {
        case .null: nil
        case .bool: "Boolean"
        case .number: "Number"
        case .string: "String"
        case .array: "Array"
        case .object(let object):
            if let type = object["__type"]?.stringValue,
                ["Date", "Pointer", "File", "GeoPoint", "Bytes", "Relation", "Polygon"].contains(type)
            {
                type
            } else {
                "Object"
            }
        }
    }
}

/// Parse's rules for field names.
public enum ParseKeys {
    /// A field a client may write: a letter, then letters, digits and underscores (`SchemaController`'s
    /// `fieldNameIsValid`).
    public static func isFieldName(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first.isASCIILetter else { return false }
        return key.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }

    /// A key a `where` clause may name: a field name with dots into objects.
    static func isQueryKey(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first.isASCIILetter else { return false }
        return key.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == "." }
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
