import DeviceProtocol
import Foundation
import Testing

@testable import ParseModel

/// A `$regex` runs under a budget of ICU's steps a field (docs/limits.md): a pattern that backtracks is
/// refused with Parse's code 102 naming the field and the budget, within the budget's few milliseconds,
/// while ordinary patterns over the longest field matched still match.
@Suite struct RegexBudgetTests {
    /// Issue 31's field: forty `a` then `!`, which no backtracking pattern ending in `b` or `$` matches.
    let hostile: [String: JSONValue] = ["x": .string(String(repeating: "a", count: 40) + "!")]

    func query(_ pattern: String, _ options: String? = nil) throws -> ParseQuery {
        var operators: [String: JSONValue] = ["$regex": .string(pattern)]
        if let options { operators["$options"] = .string(options) }
        return try ParseQuery(where: ["x": .object(operators)])
    }

    @Test(arguments: ["(a*)*b", "^(a+)+$", "^(a|aa)+$", "(a|a)*b"])
    func aBacktrackingPatternIsRefusedNamingTheBudget(_ pattern: String) throws {
        let compiled = try query(pattern)
        #expect(
            throws: ParseFailure(
                code: 102,
                "$regex on x took more than 1000000 steps, the budget for one field (docs/limits.md): the pattern backtracks too much to match"
            )
        ) { try compiled.matches(hostile) }
    }

    @Test func aDottedFieldIsNamedWhole() throws {
        let compiled = try ParseQuery(where: ["meta.name": ["$regex": "(a*)*b"]])
        let object: [String: JSONValue] = ["meta": ["name": hostile["x"]!]]
        #expect(throws: ParseFailure.self) { try compiled.matches(object) }
        do {
            _ = try compiled.matches(object)
        } catch {
            #expect(error.message.hasPrefix("$regex on meta.name took more than"))
        }
    }

    @Test(arguments: [
        ("a", true), ("!$", true), ("^a{40}!$", true), ("b", false), ("^(a|b)*!$", true), ("A{3}", false),
    ])
    func ordinaryPatternsStillMatch(_ pattern: String, _ expected: Bool) throws {
        #expect(try query(pattern).matches(hostile) == expected)
    }

    @Test func anOrdinaryPatternOverTheLongestMatchedFieldFitsTheBudget() throws {
        // The whole 16,384 units are searched (one progress call a position) without running out.
        let long: [String: JSONValue] = ["x": .string(String(repeating: "ab", count: 20_000) + "z")]
        #expect(try query("b+c").matches(long) == false)
        #expect(try query("(ab)+a").matches(long) == true)
        #expect(try query("B", "i").matches(long) == true)
    }

    @Test func aQueryOverManyObjectsStopsAtTheFirstThatRunsOut() throws {
        let objects = Array(repeating: hostile, count: 20)
        #expect(throws: ParseFailure.self) { try query("(a*)*b").filter(objects) }
        #expect(try query("a!").filter(objects).count == 20)
    }

    @Test func theBudgetCountsPositionsAndSteps() {
        // One call a starting position (n + 1 of them) and one every 10,000 steps.
        var budget = RegexRun.Budget(textLength: 3, steps: 20_000)
        #expect(budget.calls == 6)
        var spent: [Bool] = []
        for _ in 0..<7 { spent.append(budget.spend()) }
        #expect(spent == [true, true, true, true, true, true, false])
        #expect(RegexRun.Budget(textLength: 0, steps: 1).calls == 2, "at least one step call")
        #expect(RegexRun.Budget(textLength: 16_384).calls == 16_385 + 100)
    }
}
