import Foundation
import HarnessCore
import HarnessTimeline
import Testing

@Suite struct ChainVerdictTests {
    func events(_ kinds: [(String, [String: String])]) -> [TimelineEvent] {
        kinds.enumerated().map { index, entry in
            TimelineEvent(
                sequence: index + 1, elapsed: Double(index), date: Date(), kind: EventKind(entry.0), source: "t",
                attributes: EventAttributes(entry.1))
        }
    }

    func expectation(chain: [EventPattern], never: [EventPattern] = []) -> HarnessCore.Expectation {
        var expectation = HarnessCore.Expectation()
        expectation.chain = chain
        expectation.never = never
        return expectation
    }

    @Test func linksMustAppearInOrder() {
        let chain = [EventPattern(kind: "a"), EventPattern(kind: "b")]
        let inOrder = ChainVerdict.evaluate(expectation(chain: chain), events: events([("a", [:]), ("b", [:])])) { _ in nil }
        let reversed = ChainVerdict.evaluate(expectation(chain: chain), events: events([("b", [:]), ("a", [:])])) { _ in nil }
        #expect(inOrder.passed)
        #expect(!reversed.passed)
        #expect(reversed.links[0].event != nil)
        #expect(reversed.links[1].event == nil)
    }

    @Test func attributesMustMatch() {
        let chain = [EventPattern(kind: "app.fetchCompleted", attributes: ["result": .equals("newData")])]
        let failed = ChainVerdict.evaluate(
            expectation(chain: chain), events: events([("app.fetchCompleted", ["result": "failed"])])) { _ in nil }
        let good = ChainVerdict.evaluate(
            expectation(chain: chain), events: events([("app.fetchCompleted", ["result": "newData"])])) { _ in nil }
        #expect(!failed.chainComplete)
        #expect(good.chainComplete)
    }

    @Test func aFixtureDigestIsComparedWithTheAttribute() {
        let chain = [EventPattern(kind: "transfer.completed", attributes: ["sha256": .sha256OfFixture("photo.jpg")])]
        let events = events([("transfer.completed", ["sha256": "abc"])])
        #expect(ChainVerdict.evaluate(expectation(chain: chain), events: events) { $0 == "photo.jpg" ? "abc" : nil }.passed)
        #expect(!ChainVerdict.evaluate(expectation(chain: chain), events: events) { _ in "def" }.passed)
    }

    @Test func aForbiddenEventFailsACompleteChain() {
        let verdict = ChainVerdict.evaluate(
            expectation(chain: [EventPattern(kind: "a")], never: [EventPattern(kind: "device.watchdog.killed")]),
            events: events([("a", [:]), ("device.watchdog.killed", ["reason": "r"])])) { _ in nil }
        #expect(verdict.chainComplete)
        #expect(!verdict.passed)
        #expect(verdict.violations.count == 1)
    }
}
