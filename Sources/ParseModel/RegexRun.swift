import Foundation

/// One `$regex` run over one field by ICU (through `NSRegularExpression`), under its query's budget of
/// steps. ICU's matcher backtracks, so a pattern such as `(a*)*b` takes time exponential in the field's
/// length; it is stopped once the query has spent ``ParseQuery/regexStepBudget`` and the query is refused.
enum RegexRun {
    /// A query's budget, counted in what ICU reports: with `.reportProgress` it calls back once for each
    /// starting position it tries (the find's progress) and once every 10,000 steps of a match attempt
    /// (ICU's match callback). A field of n UTF-16 units is allowed its n + 1 positions; the calls beyond
    /// them, each 10,000 steps, come out of the query's budget, shared by every field it is matched on.
    struct Budget: Equatable {
        /// ICU's match callback comes every this many steps (`TIMER_INITIAL_VALUE` in ICU's rematch.cpp).
        static let stepsPerCall = 10_000
        /// The step calls left to the query.
        private(set) var stepCalls: Int

        init(steps: Int = ParseQuery.regexStepBudget) {
            stepCalls = max(1, steps / Self.stepsPerCall)
        }

        /// One field's run: its positions, then the query's step calls.
        struct Field {
            var positions: Int
            var calls = 0
        }

        /// Counts one callback of `field`'s run; false once the field's positions and the query's step
        /// calls are spent.
        mutating func spend(_ field: inout Field) -> Bool {
            field.calls += 1
            guard field.calls > field.positions else { return true }
            stepCalls -= 1
            return stepCalls >= 0
        }
    }

    /// Whether `expression` matches somewhere in the first ``ParseQuery/longestMatchedText`` units of
    /// `text`; throws Parse's code 102 naming `field` and the budget when the query's budget runs out.
    static func firstMatch(
        _ expression: NSRegularExpression, in text: String, field: [String], budget: inout Budget
    ) throws(ParseFailure) -> Bool {
        let length = min(text.utf16.count, ParseQuery.longestMatchedText)
        var run = Budget.Field(positions: length + 1)
        // Foundation's block may escape (it does not): it spends a copy, written back after.
        var left = budget
        defer { budget = left }
        var matched = false
        var exhausted = false
        expression.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(location: 0, length: length)) {
            match, _, stop in
            if match != nil {
                matched = true
                stop.pointee = true
            } else if !left.spend(&run) {
                exhausted = true
                stop.pointee = true
            }
        }
        guard !exhausted else { throw exceeded(field: field) }
        return matched
    }

    static func exceeded(field: [String]) -> ParseFailure {
        .invalidQuery(
            "$regex on \(field.joined(separator: ".")) took the query past \(ParseQuery.regexStepBudget) steps, the budget for one query (docs/limits.md): the pattern backtracks too much to match"
        )
    }
}
