import DeviceProtocol

/// A find's parameters as Parse Server reads them (`ClassesRouter.optionsFromBody`): `where`, `order`
/// (comma-separated, `-` for descending), `limit` (100 unless given), `skip`, `keys`, `excludeKeys` and
/// `count`; and the find itself over stored objects, so the store only supplies rows.
public struct FindOptions: Sendable {
    public var query: ParseQuery = .everything
    public var order: [(key: String, descending: Bool)] = []
    public var limit = FindOptions.defaultLimit
    public var skip = 0
    public var keys: Set<String>?
    public var excludeKeys: Set<String> = []
    public var count = false

    public static let defaultLimit = 100
    /// The most `limit` and `skip` take: far beyond a test's installations, and a bound on the arithmetic.
    public static let largestLimit = 1_000_000_000

    /// Parameters Parse Server takes and ignores here (includes, read preferences, hints).
    static let ignored: Set<String> = [
        "include", "includeAll", "redirectClassNameForKey", "readPreference", "includeReadPreference",
        "subqueryReadPreference", "hint", "explain", "comment",
    ]

    public init() {}

    /// Reads a find's parameters: a GET's query string (each value JSON when it parses as JSON) or a
    /// POST's body with `_method: GET`.
    public init(parameters: [String: JSONValue]) throws(ParseFailure) {
        for key in parameters.keys.sorted() {
            let value = parameters[key]!
            switch key {
            case "where": query = try ParseQuery(whereJSON: value)
            case "order": order = try Self.order(value)
            case "limit": limit = try Self.whole(value, named: key)
            case "skip": skip = try Self.whole(value, named: key)
            case "keys": keys = Self.names(value)
            case "excludeKeys": excludeKeys = Self.names(value) ?? []
            case "count": count = ParseValues.truthy(value)
            default:
                guard Self.ignored.contains(key) else { throw .invalidQuery("Invalid parameter for query: \(key)") }
            }
        }
    }

    /// A get by id takes only `keys`, `excludeKeys` and what is ignored.
    public static func forGet(parameters: [String: JSONValue]) throws(ParseFailure) -> FindOptions {
        var options = FindOptions()
        for (key, value) in parameters {
            switch key {
            case "keys": options.keys = names(value)
            case "excludeKeys": options.excludeKeys = names(value) ?? []
            case "include", "readPreference", "includeReadPreference": break
            default: throw .invalidQuery("Improper encode of parameter")
            }
        }
        return options
    }

    /// Runs the find: matches, sorts (stable, so rows keep the store's order among equals), skips,
    /// limits and projects. `count` is every match, whatever the skip and limit.
    /// Throws when a `$regex` runs past its budget (``ParseQuery/regexStepBudget``).
    public func run(over objects: [[String: JSONValue]]) throws(ParseFailure) -> (
        results: [[String: JSONValue]], count: Int?
    ) {
        var matched = try query.filter(objects)
        if !order.isEmpty {
            matched = matched.enumerated().sorted { lhs, rhs in
                for (key, descending) in order {
                    switch ParseValues.order(lhs.element[key], rhs.element[key]) {
                    case .same: continue
                    case .less: return !descending
                    case .greater: return descending
                    }
                }
                return lhs.offset < rhs.offset
            }.map(\.element)
        }
        let total = count ? matched.count : nil
        guard limit > 0 else { return ([], total) }
        let page = matched.dropFirst(skip).prefix(limit)
        return (page.map(project), total)
    }

    /// An object with only the asked-for keys (and those Parse always returns), less the excluded.
    public func project(_ object: [String: JSONValue]) -> [String: JSONValue] {
        var object = object
        if let keys {
            let roots = Set(keys.map { String($0.split(separator: ".").first ?? "") })
            object = object.filter { roots.contains($0.key) || Self.alwaysReturned.contains($0.key) }
        }
        for key in excludeKeys where !Self.alwaysReturned.contains(key) { object[key] = nil }
        return object
    }

    /// What `keys` and `excludeKeys` never take out.
    static let alwaysReturned: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL"]

    static func order(_ value: JSONValue) throws(ParseFailure) -> [(key: String, descending: Bool)] {
        guard case .string(let text) = value else { throw .invalidQuery("order must be a string of keys") }
        var order: [(key: String, descending: Bool)] = []
        for part in text.split(separator: ",") {
            let name = part.trimmingPrefix("-")
            guard ParseKeys.isQueryKey(String(name)) else { throw .invalidFieldName(String(name)) }
            order.append((String(name), part.hasPrefix("-")))
        }
        return order
    }

    static func whole(_ value: JSONValue, named name: String) throws(ParseFailure) -> Int {
        let number: Double? =
            switch value {
            case .number(let number): number
            case .string(let text): Double(text)
            default: nil
            }
        guard let number, number.rounded() == number, number >= 0, number <= Double(largestLimit) else {
            throw .invalidQuery("\(name) must be a whole number from 0 to \(largestLimit), not \(value.jsonString())")
        }
        return Int(number)
    }

    static func names(_ value: JSONValue) -> Set<String>? {
        switch value {
        case .string(let text): Set(text.split(separator: ",").map(String.init))
        case .array(let items): Set(items.compactMap(\.stringValue))
        default: nil
        }
    }
}
