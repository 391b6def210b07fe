import DeviceProtocol
import Foundation

/// A Parse `where` clause, checked once and then matched against stored objects the way Parse Server's
/// MongoDB adapter does: equality (an array field equals a value it contains, `null` matches a missing
/// field), `$eq $ne $lt $lte $gt $gte $in $nin $all $containedBy $exists $regex`, `$or $and $nor`, dotted
/// keys into objects, and `{"__type":"Date"}` values compared by their time. A field holding `null`
/// exists, as in MongoDB. A malformed clause is refused with Parse's code and text before anything is
/// matched.
public struct ParseQuery: @unchecked Sendable {
    /// The clause as the client sent it.
    public let source: [String: JSONValue]
    private let conditions: [Condition]

    /// The query that matches everything.
    public static let everything = try! ParseQuery(where: [:])

    public init(where source: [String: JSONValue]) throws(ParseFailure) {
        self.source = source
        conditions = try Self.compile(source, depth: 0)
        let regexes = conditions.reduce(0) { $0 + $1.regexCount }
        guard regexes <= Self.mostRegexes else {
            throw .invalidQuery("A where clause has at most \(Self.mostRegexes) $regex conditions, not \(regexes)")
        }
    }

    public init(whereJSON value: JSONValue) throws(ParseFailure) {
        guard case .object(let object) = value else {
            throw .invalidJSON("Invalid where clause: it must be a JSON object, not \(value.jsonString())")
        }
        try self.init(where: object)
    }

    /// Whether `object` matches. Throws only when its `$regex`es run past the query's budget of steps
    /// (``regexStepBudget``): Parse's code 102, naming the field and the budget.
    public func matches(_ object: [String: JSONValue]) throws(ParseFailure) -> Bool {
        var budget = RegexRun.Budget()
        return try Condition.all(conditions, match: object, budget: &budget)
    }

    /// The objects of `objects` that match, in their order. Every `$regex` run over them shares one
    /// budget of steps (``regexStepBudget``): past it the whole filter throws.
    public func filter(_ objects: [[String: JSONValue]]) throws(ParseFailure) -> [[String: JSONValue]] {
        var budget = RegexRun.Budget()
        return try filter(objects, budget: &budget)
    }

    func filter(_ objects: [[String: JSONValue]], budget: inout RegexRun.Budget) throws(ParseFailure)
        -> [[String: JSONValue]]
    {
        var matched: [[String: JSONValue]] = []
        for object in objects where try Condition.all(conditions, match: object, budget: &budget) {
            matched.append(object)
        }
        return matched
    }

    /// The same query with `conditions` added (as Parse adds `deviceToken: {$exists: true}` before sending).
    public func adding(_ key: String, _ condition: JSONValue) throws(ParseFailure) -> ParseQuery {
        guard source[key] != nil else {
            return try ParseQuery(where: source.merging([key: condition]) { old, _ in old })
        }
        return try ParseQuery(where: ["$and": [.object(source), .object([key: condition])]])
    }

    /// How deep `$or`/`$and`/`$nor` may nest: far beyond any real query, and a bound on the recursion.
    static let deepestNesting = 32
    /// The longest `$regex` taken.
    static let longestPattern = 1_024
    /// How much of a field a `$regex` is run over (UTF-16 units): its first 16,384.
    static let longestMatchedText = 16_384
    /// How many of ICU's backtracking steps the `$regex`es of one query may take together, over every
    /// object and field it is matched against, beyond one a starting position: a million (a few tens of
    /// milliseconds). ICU's matcher backtracks, so a pattern such as `(a*)*b` takes time exponential in
    /// the field's length; past the budget the query is refused. ICU counts steps in tens of thousands,
    /// so a field's match under 10,000 steps is not counted: ``mostRegexes`` bounds those.
    public static let regexStepBudget = 1_000_000
    /// The most `$regex` conditions in one clause (each run over each object's field).
    public static let mostRegexes = 100
}

// MARK: - Compiling

extension ParseQuery {
    indirect enum Condition {
        case field([String], [Test])
        case or([[Condition]])
        case and([[Condition]])
        case nor([[Condition]])

        func matches(_ object: [String: JSONValue], budget: inout RegexRun.Budget) throws(ParseFailure) -> Bool {
            switch self {
            case .field(let path, let tests):
                let value = Self.value(at: path, in: object)
                for test in tests where try !test.matches(value, field: path, budget: &budget) { return false }
                return true
            case .or(let branches):
                for branch in branches where try Self.all(branch, match: object, budget: &budget) { return true }
                return false
            case .and(let branches):
                for branch in branches where try !Self.all(branch, match: object, budget: &budget) { return false }
                return true
            case .nor(let branches):
                for branch in branches where try Self.all(branch, match: object, budget: &budget) { return false }
                return true
            }
        }

        static func all(
            _ conditions: [Condition], match object: [String: JSONValue], budget: inout RegexRun.Budget
        ) throws(ParseFailure) -> Bool {
            for condition in conditions where try !condition.matches(object, budget: &budget) { return false }
            return true
        }

        /// How many `$regex` tests the condition holds, its branches' included.
        var regexCount: Int {
            switch self {
            case .field(_, let tests):
                return tests.count { if case .regex = $0 { true } else { false } }
            case .or(let branches), .and(let branches), .nor(let branches):
                return branches.reduce(0) { total, branch in branch.reduce(total) { $0 + $1.regexCount } }
            }
        }

        static func value(at path: [String], in object: [String: JSONValue]) -> JSONValue? {
            var current: JSONValue? = .object(object)
            for key in path {
                guard case .object(let inner)? = current else { return nil }
                current = inner[key]
            }
            return current
        }
    }

    enum Test {
        case equal(JSONValue)
        case notEqual(JSONValue)
        case less(JSONValue, orEqual: Bool)
        case greater(JSONValue, orEqual: Bool)
        case within([JSONValue])
        case notWithin([JSONValue])
        case all([JSONValue])
        case containedBy([JSONValue])
        case exists(Bool)
        case regex(NSRegularExpression)

        func matches(_ value: JSONValue?, field: [String], budget: inout RegexRun.Budget) throws(ParseFailure)
            -> Bool
        {
            switch self {
            case .equal(let expected): return ParseValues.equal(value, expected)
            case .notEqual(let expected): return !ParseValues.equal(value, expected)
            case .less(let bound, let orEqual):
                return ParseValues.compare(value, bound, orEqual ? [.less, .same] : [.less])
            case .greater(let bound, let orEqual):
                return ParseValues.compare(value, bound, orEqual ? [.greater, .same] : [.greater])
            case .within(let values): return values.contains { ParseValues.equal(value, $0) }
            case .notWithin(let values): return !values.contains { ParseValues.equal(value, $0) }
            case .all(let values):
                guard case .array(let items)? = value else { return false }
                return values.allSatisfy { wanted in items.contains { ParseValues.equal($0, wanted) } }
            case .containedBy(let values):
                guard case .array(let items)? = value else { return false }
                return items.allSatisfy { item in values.contains { ParseValues.equal(item, $0) } }
            case .exists(let wanted):
                return (value != nil) == wanted
            case .regex(let expression):
                let texts: [String] =
                    switch value {
                    case .string(let text)?: [text]
                    case .array(let items)?: items.compactMap(\.stringValue)
                    default: []
                    }
                for text in texts where try RegexRun.firstMatch(expression, in: text, field: field, budget: &budget) {
                    return true
                }
                return false
            }
        }
    }

    static func compile(_ clause: [String: JSONValue], depth: Int) throws(ParseFailure) -> [Condition] {
        guard depth <= deepestNesting else {
            throw .invalidQuery("Query nests $or, $and and $nor more than \(deepestNesting) deep")
        }
        var conditions: [Condition] = []
        for key in clause.keys.sorted() {
            let value = clause[key]!
            switch key {
            case "$or", "$and", "$nor":
                guard case .array(let items) = value, !items.isEmpty || key != "$nor" else {
                    throw .invalidQuery(
                        key == "$nor"
                            ? "Bad $nor format - use an array of at least 1 value."
                            : "Bad \(key) format - use an array value.")
                }
                var branches: [[Condition]] = []
                for item in items {
                    guard case .object(let branch) = item else {
                        throw .invalidQuery("Bad \(key) format - use an array value.")
                    }
                    branches.append(try compile(branch, depth: depth + 1))
                }
                conditions.append(key == "$or" ? .or(branches) : key == "$and" ? .and(branches) : .nor(branches))
            default:
                guard ParseKeys.isQueryKey(key) else { throw .invalidKeyName(key) }
                if key == "ACL" { throw .invalidQuery("Cannot query on ACL.") }
                let path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                conditions.append(.field(path, try tests(for: value)))
            }
        }
        return conditions
    }

    /// An object whose keys all begin with `$` holds operators; anything else is a value to equal.
    static func tests(for value: JSONValue) throws(ParseFailure) -> [Test] {
        guard case .object(let object) = value, object["__type"] == nil else { return [.equal(value)] }
        guard object.keys.contains(where: { $0.hasPrefix("$") }) else {
            throw .invalidJSON("You cannot use [object Object] as a query parameter.")
        }
        var tests: [Test] = []
        for name in object.keys.sorted() where name != "$options" {
            let operand = object[name]!
            switch name {
            case "$eq": tests.append(.equal(operand))
            case "$ne": tests.append(.notEqual(operand))
            case "$lt": tests.append(.less(operand, orEqual: false))
            case "$lte": tests.append(.less(operand, orEqual: true))
            case "$gt": tests.append(.greater(operand, orEqual: false))
            case "$gte": tests.append(.greater(operand, orEqual: true))
            case "$in", "$nin", "$all", "$containedBy":
                guard case .array(let values) = operand else {
                    throw .invalidJSON(
                        name == "$containedBy" ? "bad $containedBy: should be an array" : "bad \(name) value")
                }
                switch name {
                case "$in": tests.append(.within(values))
                case "$nin": tests.append(.notWithin(values))
                case "$all": tests.append(.all(values))
                default: tests.append(.containedBy(values))
                }
            case "$exists":
                tests.append(.exists(ParseValues.truthy(operand)))
            case "$regex":
                tests.append(.regex(try regex(operand, options: object["$options"])))
            default:
                throw .badConstraint(name)
            }
        }
        if object["$options"] != nil, object["$regex"] == nil { throw .badConstraint("$options") }
        return tests
    }

    static func regex(_ pattern: JSONValue, options: JSONValue?) throws(ParseFailure) -> NSRegularExpression {
        guard case .string(let text) = pattern else { throw .invalidJSON("bad regex: \(pattern.jsonString())") }
        guard text.utf8.count <= longestPattern else {
            throw .invalidQuery("$regex is longer than \(longestPattern) bytes")
        }
        var flags: NSRegularExpression.Options = []
        if let options {
            guard case .string(let letters) = options, letters.allSatisfy({ "imxs".contains($0) }) else {
                throw .invalidQuery("Bad $options value for query: \(options.stringValue ?? options.jsonString())")
            }
            if letters.contains("i") { flags.insert(.caseInsensitive) }
            if letters.contains("m") { flags.insert(.anchorsMatchLines) }
            if letters.contains("x") { flags.insert(.allowCommentsAndWhitespace) }
            if letters.contains("s") { flags.insert(.dotMatchesLineSeparators) }
        }
        do {
            return try NSRegularExpression(pattern: text, options: flags)
        } catch {
            throw .invalidQuery("Invalid regular expression: \(text)")
        }
    }
}
