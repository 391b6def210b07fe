import Foundation

/// One `$regex` run over one field by ICU (through `NSRegularExpression`), under a budget of its steps.
/// ICU's matcher backtracks, so a pattern such as `(a*)*b` takes time exponential in the field's
/// length; it is stopped once it has spent ``ParseQuery/regexStepBudget`` and the query is refused.
enum RegexRun {
    /// The budget, counted in what ICU reports: with `.reportProgress` it calls back once for each
    /// starting position it tries (the find's progress) and once every 10,000 steps of a match attempt
    /// (ICU's match callback). A field of n UTF-16 units gets n + 1 positions and the step budget on top.
    struct Budget: Equatable {
        /// ICU's match callback comes every this many steps (`TIMER_INITIAL_VALUE` in ICU's rematch.cpp).
        static let stepsPerCall = 10_000
        /// The callbacks allowed.
        let calls: Int
        private(set) var spent = 0

        init(textLength: Int, steps: Int = ParseQuery.regexStepBudget) {
            calls = textLength + 1 + max(1, steps / Self.stepsPerCall)
        }

        /// Counts one callback; false once the budget is spent.
        mutating func spend() -> Bool {
            spent += 1
            return spent <= calls
        }
    }

    /// Whether `expression` matches somewhere in the first ``ParseQuery/longestMatchedText`` units of
    /// `text`; throws Parse's code 102 naming `field` and the budget when the match runs past it.
    static func firstMatch(_ expression: NSRegularExpression, in text: String, field: [String]) throws(ParseFailure)
        -> Bool
    {
        let length = min(text.utf16.count, ParseQuery.longestMatchedText)
        var budget = Budget(textLength: length)
        var matched = false
        var exhausted = false
        expression.enumerateMatches(in: text, options: [.reportProgress], range: NSRange(location: 0, length: length)) {
            match, _, stop in
            if match != nil {
                matched = true
                stop.pointee = true
            } else if !budget.spend() {
                exhausted = true
                stop.pointee = true
            }
        }
        guard !exhausted else { throw exceeded(field: field) }
        return matched
    }

    static func exceeded(field: [String]) -> ParseFailure {
        .invalidQuery(
            "$regex on \(field.joined(separator: ".")) took more than \(ParseQuery.regexStepBudget) steps, the budget for one field (docs/limits.md): the pattern backtracks too much to match"
        )
    }
}
