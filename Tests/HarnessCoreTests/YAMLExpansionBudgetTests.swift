import Foundation
import TestSupport
import Testing
import Yams

@testable import HarnessCore

/// A small harness.yml whose aliases stand for a huge document is refused at once, naming the file, the
/// line and the key path where the aliases are written; ordinary reuse reads as before (issue 31).
@Suite struct YAMLExpansionBudgetTests {
    /// Nine anchors, each a mapping of nine aliases of the one before, under a push step's `data:`: 1,024
    /// bytes that stand for 9^9 (387,420,489) `lol`s. Line 12 is `a`, line 17 `f`.
    static func laughs(levels: Int) -> String {
        let header = """
            version: 1
            apps:
              nasa-tv:
                bundleId: com.razeware.NASA-TV
                command: [.build/debug/nasa-tv]
            scenarios:
              laughs:
                steps:
                  - push:
                      where: {deviceType: ios}
                      data:

            """
        let anchors = [
            "a: &a {a1: lol, a2: lol, a3: lol, a4: lol, a5: lol, a6: lol, a7: lol, a8: lol, a9: lol}",
            "b: &b {b1: *a, b2: *a, b3: *a, b4: *a, b5: *a, b6: *a, b7: *a, b8: *a, b9: *a}",
            "c: &c {c1: *b, c2: *b, c3: *b, c4: *b, c5: *b, c6: *b, c7: *b, c8: *b, c9: *b}",
            "d: &d {d1: *c, d2: *c, d3: *c, d4: *c, d5: *c, d6: *c, d7: *c, d8: *c, d9: *c}",
            "e: &e {e1: *d, e2: *d, e3: *d, e4: *d, e5: *d, e6: *d, e7: *d, e8: *d, e9: *d}",
            "f: &f {f1: *e, f2: *e, f3: *e, f4: *e, f5: *e, f6: *e, f7: *e, f8: *e, f9: *e}",
            "g: &g {g1: *f, g2: *f, g3: *f, g4: *f, g5: *f, g6: *f, g7: *f, g8: *f, g9: *f}",
            "h: &h {h1: *g, h2: *g, h3: *g, h4: *g, h5: *g, h6: *g, h7: *g, h8: *g, h9: *g}",
            "i: &i {i1: *h, i2: *h, i3: *h, i4: *h, i5: *h, i6: *h, i7: *h, i8: *h, i9: *h}",
        ]
        return header + anchors.prefix(levels).map { "            \($0)\n" }.joined()
    }

    /// ConfigurationLoaderTests' valid harness.yml.
    let valid = ConfigurationLoaderTests().valid

    /// The verdict on `text`, its parser (which holds the anchors) kept alive meanwhile, as the loader does.
    func verdict(_ text: String, _ budget: YAMLExpansionBudget) throws -> YAMLExpansionBudget.Verdict {
        let parser = try Yams.Parser(yaml: text)
        let root = try #require(try parser.singleRoot())
        return withExtendedLifetime(parser) { budget.verdict(on: root) }
    }

    /// Thirteen nodes: the root, `a`, `&a`'s list of two, `b`, and `b`'s list of two copies of `&a`'s.
    static let twoAliases = "a: &a [x, y]\nb: [*a, *a]\n"

    static let countRows: [(Int, YAMLExpansionBudget.Verdict)] = [
        // Under the budget, and exactly at it: every node is counted.
        (14, .within(nodes: 13)),
        (13, .within(nodes: 13)),
        // Over it inside the second alias: reported at `b`'s list, where the alias is written.
        (
            12,
            .over(YAMLExpansionBudget.Overrun(limit: .nodes, throughAlias: true, line: 2, column: 4, keyPath: "b[1]"))
        ),
        // Over it at a node the file spells out.
        (6, .over(YAMLExpansionBudget.Overrun(limit: .nodes, throughAlias: false, line: 2, column: 4, keyPath: "b"))),
    ]

    @Test(arguments: YAMLExpansionBudgetTests.countRows)
    func aliasesCountEachTimeTheyAreReached(nodes: Int, expected: YAMLExpansionBudget.Verdict) throws {
        #expect(try verdict(Self.twoAliases, .init(nodes: nodes, depth: 1_000)) == expected)
    }

    /// Lists and mappings nest five deep once `b[1]`'s alias is expanded: `b`, `b[1]`, `*a`, `*a`'s own
    /// list, inside the root mapping.
    static let depthRows: [(Int, YAMLExpansionBudget.Verdict)] = [
        (6, .within(nodes: 14)),
        (5, .within(nodes: 14)),
        (
            4,
            .over(
                YAMLExpansionBudget.Overrun(limit: .depth, throughAlias: true, line: 2, column: 9, keyPath: "b[1][0]"))
        ),
    ]

    @Test(arguments: YAMLExpansionBudgetTests.depthRows)
    func aliasesNestWhereTheyAreWritten(depth: Int, expected: YAMLExpansionBudget.Verdict) throws {
        #expect(try verdict("a: &a [[x]]\nb: [*a, [*a]]\n", .init(nodes: 1_000_000, depth: depth)) == expected)
    }

    /// Yams holds anchors weakly: once the parser is gone, aliases still count, only not as aliases.
    @Test func aliasesCountTheSameOnceTheParserIsGone() throws {
        let root = try #require(try Yams.compose(yaml: Self.twoAliases))
        #expect(YAMLExpansionBudget(nodes: 13, depth: 1_000).verdict(on: root) == .within(nodes: 13))
        guard case .over(let overrun) = YAMLExpansionBudget(nodes: 12, depth: 1_000).verdict(on: root) else {
            Issue.record("13 nodes passed a budget of 12")
            return
        }
        #expect(overrun.limit == .nodes)
    }

    /// The walk stops at the budget's first node past it, so a billion nodes cost as much as a million.
    @Test func theBillionLaughsStopAtTheBudget() throws {
        let budget = YAMLExpansionBudget.harnessYML
        #expect(budget.nodes == 1_000_000 && budget.depth == 1_000)
        #expect(Self.laughs(levels: 9).utf8.count == 1_024)
        #expect(
            try verdict(Self.laughs(levels: 9), budget)
                == YAMLExpansionBudget.Verdict.over(
                    YAMLExpansionBudget.Overrun(
                        limit: .nodes, throughAlias: true, line: 17, column: 68,
                        keyPath: "scenarios.laughs.steps[0].push.data.f.f7")))
    }

    @Test(arguments: [9, 7])
    func theBillionLaughsAreAConfigurationErrorAtOnce(levels: Int) throws {
        // Before, nine levels passed 550 MB and ran on for minutes; now the walk stops after a million nodes.
        let problem = try #require(configurationError(Self.laughs(levels: levels)))
        #expect(problem.file == "harness.yml" && problem.line == 17)
        #expect(problem.keyPath == "scenarios.laughs.steps[0].push.data.f.f7")
        #expect(problem.description.hasPrefix("harness.yml:17:"))
        #expect(
            problem.message.hasPrefix("aliases expand this document past 1,000,000 nodes (the limit, docs/limits.md)"),
            "\(problem)")
    }

    /// An alias as a key (or inside one) is refused from libyaml's events, before Yams composes the
    /// document: Yams hashes every key to find duplicates, and hashing the laughs' alias walks all of them.
    @Test func theLaughsAsAKeyAreRefusedBeforeTheyAreComposed() throws {
        let text = Self.laughs(levels: 9) + "            ? *i\n            : x\n"
        let problem = try #require(configurationError(text))
        #expect(problem.line == 21 && problem.column == 15, "\(problem)")
        #expect(problem.message == "an alias may not be a mapping key, nor be inside one: harness.yml's keys are names")
    }

    @Test(arguments: [
        ("a: &a x\n*a : y\n", YAMLAliasKeys.Place(line: 2, column: 1)),
        ("a: &a x\n? *a\n: y\n", YAMLAliasKeys.Place(line: 2, column: 3)),
        ("a: &a x\nb: {*a : y}\n", YAMLAliasKeys.Place(line: 2, column: 5)),
        ("a: &a x\n? [1, {k: *a}]\n: y\n", YAMLAliasKeys.Place(line: 2, column: 11)),
    ])
    func aliasesInAKeysPlaceAreFound(_ text: String, _ place: YAMLAliasKeys.Place) {
        #expect(YAMLAliasKeys.first(in: text) == place)
    }

    @Test(arguments: [
        "a: &a x\nb: *a\n", "a: &a [1]\nb: [*a, *a]\n", "? [1, 2]\n: y\nb: &b {c: d}\ne: {f: *b}\n", "- *x\n",
        "not: [valid",
    ])
    func aliasesAsValuesAreNoKeys(_ text: String) {
        #expect(YAMLAliasKeys.first(in: text) == nil)
    }

    /// docs/limits.md shows the error as a user sees it.
    @Test func theLimitsPageShowsTheError() throws {
        let page = try String(
            contentsOf: PackagePaths.root.appendingPathComponent("docs/limits.md"), encoding: .utf8)
        let problem = try #require(configurationError(Self.laughs(levels: 9)))
        #expect(page.contains("`\(problem.description)`"), "docs/limits.md does not show: \(problem)")
    }

    /// Three levels (1,869 nodes expanded) are within the budget: the push reads as if written out in full.
    @Test func fewerLaughsAreReadInFull() throws {
        let configuration = try ConfigurationLoader.parse(Self.laughs(levels: 3), file: "harness.yml")
        let step = try #require(configuration.scenario(named: "laughs")?.steps.first)
        guard case .push(let body) = step else {
            Issue.record("not a push: \(step)")
            return
        }
        let object = try JSONSerialization.jsonObject(with: body.data) as? [String: Any]
        let data = try #require(object?["data"] as? [String: Any])
        let c = try #require(data["c"] as? [String: Any])
        let b = try #require(c["c9"] as? [String: Any])
        #expect(
            b["b9"] as? [String: String] == [
                "a1": "lol", "a2": "lol", "a3": "lol", "a4": "lol", "a5": "lol",
                "a6": "lol", "a7": "lol", "a8": "lol", "a9": "lol",
            ])
    }

    /// Anchors and aliases for ordinary reuse (a step repeated, a payload's part twice) read as before.
    @Test func ordinaryAliasesStillLoad() throws {
        let text = valid.replacingOccurrences(
            of: "      - push: {where: {deviceType: ios}, data: {content-available: 1}}\n",
            with:
                "      - push: &wake {where: {deviceType: ios}, data: {aps: &aps {content-available: 1}, again: *aps}}\n"
                + "      - push: *wake\n")
        #expect(text != valid, "the edit applies")
        let steps = try #require(try ConfigurationLoader.parse(text, file: "harness.yml").scenario(named: "first"))
            .steps
        #expect(steps.count == 4)
        guard steps.count == 4, case .push(let first) = steps[2], case .push(let second) = steps[3] else {
            Issue.record("steps 3 and 4 are not pushes: \(steps)")
            return
        }
        #expect(first.data == second.data)
        #expect(
            String(decoding: first.data, as: UTF8.self)
                == #"{"data":{"again":{"content-available":1},"aps":{"content-available":1}},"where":{"deviceType":"ios"}}"#
        )
    }

    @Test(arguments: [(0, "0"), (999, "999"), (1_000, "1,000"), (1_000_000, "1,000,000"), (-12_345, "-12,345")])
    func numbersAreGroupedInThousands(number: Int, text: String) {
        #expect(YAMLExpansionBudget.grouped(number) == text)
    }
}
