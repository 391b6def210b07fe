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
                "$regex on x took the query past 1000000 steps, the budget for one query (docs/limits.md): the pattern backtracks too much to match"
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
            #expect(error.message.hasPrefix("$regex on meta.name took the query past"))
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

    /// Issue 31's review: 2,500 backtracking conditions over twenty installations were 50,000 budgets
    /// of a field each. A clause holds at most 100 `$regex`, and they share one budget a query.
    @Test func aClauseHoldsAtMostAHundredRegexes() throws {
        func clause(_ count: Int) -> [String: JSONValue] {
            ["$or": .array((0..<count).map { _ in ["x": ["$regex": "(a*)*b"]] })]
        }
        #expect(throws: ParseFailure(code: 102, "A where clause has at most 100 $regex conditions, not 2500")) {
            try ParseQuery(where: clause(2_500))
        }
        let hundred = try ParseQuery(where: clause(100))
        var budget = RegexRun.Budget()
        #expect(throws: ParseFailure.self) { try hundred.filter(Array(repeating: hostile, count: 20), budget: &budget) }
        #expect(budget.stepCalls == -1, "stopped at the first call past the query's budget")
    }

    @Test func theQueryShareItsStepsAndEachFieldHasItsPositions() {
        // A field's n + 1 positions are its own; the calls beyond them come out of the query's budget.
        var budget = RegexRun.Budget(steps: 30_000)
        #expect(budget.stepCalls == 3)
        var first = RegexRun.Budget.Field(positions: 2)
        var spent: [Bool] = []
        for _ in 0..<4 { spent.append(budget.spend(&first)) }
        var second = RegexRun.Budget.Field(positions: 1)
        for _ in 0..<3 { spent.append(budget.spend(&second)) }
        #expect(spent == [true, true, true, true, true, true, false])
        #expect(RegexRun.Budget(steps: 1).stepCalls == 1, "at least one step call")
        #expect(RegexRun.Budget().stepCalls == 100)
    }
}
