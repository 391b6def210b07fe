import Foundation
import HarnessTimeline
import Testing

@testable import HarnessCore

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
        let inOrder = ChainVerdict.evaluate(expectation(chain: chain), events: events([("a", [:]), ("b", [:])])) { _ in
            nil
        }
        let reversed = ChainVerdict.evaluate(expectation(chain: chain), events: events([("b", [:]), ("a", [:])])) { _ in
            nil
        }
        #expect(inOrder.passed)
        #expect(!reversed.passed)
        #expect(reversed.links[0].event != nil)
        #expect(reversed.links[1].event == nil)
    }

    /// The app posts its notification 1 s before the download it announces completes: the link came too
    /// early, with both times said, and the links after it are judged on what happened.
    @Test func aLinkThatCameBeforeTheOneItFollowsIsTooEarlyAndTheRestIsJudged() {
        let chain = [
            EventPattern(kind: "transfer.completed"), EventPattern(kind: "app.localNotification"),
            EventPattern(kind: "app.fetchCompleted"),
        ]
        let run = events([("app.localNotification", [:]), ("transfer.completed", [:]), ("app.fetchCompleted", [:])])
        let verdict = ChainVerdict.evaluate(expectation(chain: chain), events: run) { _ in nil }
        #expect(!verdict.passed)
        #expect(verdict.links[1].event == nil)
        #expect(verdict.links[1].early?.sequence == 1)
        #expect(verdict.links[2].event?.sequence == 3)
        let explained = VerdictFormatter.explain(verdict, fileProblems: [], events: run)
        #expect(
            explained.contains(
                "it came at 0.000 s (#1), before transfer.completed at 1.000 s: the order the scenario expects no longer holds"
            ),
            "\(explained)")
        #expect(VerdictFormatter.chain(verdict).contains("too early"))
        // The same kind again in its place puts the chain in order: the early one was not the link.
        let later =
            run
            + events([("a", [:]), ("b", [:]), ("c", [:]), ("app.localNotification", [:])]).map {
                var event = $0
                event.sequence += run.count
                return event
            }.suffix(1)
        #expect(ChainVerdict.evaluate(expectation(chain: chain), events: later) { _ in nil }.links[1].event != nil)
    }

    @Test func attributesMustMatch() {
        let chain = [EventPattern(kind: "app.fetchCompleted", attributes: ["result": .equals("newData")])]
        let failed = ChainVerdict.evaluate(
            expectation(chain: chain), events: events([("app.fetchCompleted", ["result": "failed"])])
        ) { _ in nil }
        let good = ChainVerdict.evaluate(
            expectation(chain: chain), events: events([("app.fetchCompleted", ["result": "newData"])])
        ) { _ in nil }
        #expect(!failed.chainComplete)
        #expect(good.chainComplete)
    }

    @Test func aFixtureDigestIsComparedWithTheAttribute() {
        let chain = [EventPattern(kind: "transfer.completed", attributes: ["sha256": .sha256OfFixture("photo.jpg")])]
        let events = events([("transfer.completed", ["sha256": "abc"])])
        #expect(
            ChainVerdict.evaluate(expectation(chain: chain), events: events) { $0 == "photo.jpg" ? "abc" : nil }.passed)
        #expect(!ChainVerdict.evaluate(expectation(chain: chain), events: events) { _ in "def" }.passed)
    }

    @Test func aForbiddenEventFailsACompleteChain() {
        let verdict = ChainVerdict.evaluate(
            expectation(chain: [EventPattern(kind: "a")], never: [EventPattern(kind: "device.watchdog.killed")]),
            events: events([("a", [:]), ("device.watchdog.killed", ["reason": "r"])])
        ) { _ in nil }
        #expect(verdict.chainComplete)
        #expect(!verdict.passed)
        #expect(verdict.violations.count == 1)
    }

    @Test func eventuallyEventsMayComeInAnyOrder() {
        var expectation = expectation(chain: [EventPattern(kind: "a")])
        expectation.eventually = [EventPattern(kind: "c"), EventPattern(kind: "b")]
        let all = ChainVerdict.evaluate(expectation, events: events([("b", [:]), ("a", [:]), ("c", [:])])) { _ in nil }
        #expect(all.passed)
        let partial = ChainVerdict.evaluate(expectation, events: events([("a", [:]), ("b", [:])])) { _ in nil }
        #expect(!partial.complete)
        #expect(partial.missing.map(\.kind) == ["c"])
    }

    @Test func countsHoldExactlyAtLeastOrAtMost() {
        var expectation = expectation(chain: [])
        let received = EventPattern(kind: "device.push.received")
        expectation.counts = [CountExpectation(pattern: received, atLeast: 1, atMost: 1)]
        let once = ChainVerdict.evaluate(expectation, events: events([("device.push.received", [:])])) { _ in nil }
        #expect(once.passed)
        let twice = ChainVerdict.evaluate(
            expectation, events: events([("device.push.received", [:]), ("device.push.received", [:])])
        ) { _ in nil }
        #expect(!twice.passed)
        #expect(twice.overrun, "past its maximum: waiting cannot help")
        #expect(twice.countProblems.first?.1 == 2)
        let none = ChainVerdict.evaluate(expectation, events: []) { _ in nil }
        #expect(!none.passed && !none.overrun, "below its minimum: more may still come")
        #expect(
            CountExpectation(pattern: received, atLeast: 2, atMost: nil).description
                == "device.push.received at least 2 times")
    }

    @Test func aBrokenChainGetsAHintFromTheEventsThatExplainIt() {
        let chain = [EventPattern(kind: "device.push.delivered")]
        let timeline = events([
            ("device.push.received", ["decision": "notLaunchedAfterForceQuit"])
        ])
        let verdict = ChainVerdict.evaluate(expectation(chain: chain), events: timeline) { _ in nil }
        let text = VerdictFormatterProbe.explain(verdict, events: timeline)
        #expect(text.contains("The chain broke at link 1: expected device.push.delivered"))
        #expect(
            text.contains("hint: the push reached the device but did not wake the app: the user force-quit the app"))
    }
}

@Suite struct JSONMatchTests {
    func matches(_ subset: JSONSubset, _ payload: String) -> Bool {
        let pattern = EventPattern(kind: "device.push.received", attributes: ["payload": .json(subset)])
        let event = TimelineEvent(
            sequence: 1, elapsed: 0, date: Date(), kind: "device.push.received", source: "device",
            attributes: ["payload": payload])
        return pattern.matches(event, fixtureDigest: { _ in nil })
    }

    @Test func aSubsetOfNestedKeysMatchesWhateverElseIsThere() {
        let wanted = JSONSubset.object([
            (key: "photoTitle", value: .scalar("Nebula")),
            (key: "aps", value: .object([(key: "content-available", value: .scalar("1"))])),
        ])
        #expect(matches(wanted, #"{"aps":{"content-available":1,"sound":""},"photoTitle":"Nebula","extra":true}"#))
        #expect(!matches(wanted, #"{"aps":{"content-available":0},"photoTitle":"Nebula"}"#), "a different number")
        #expect(!matches(wanted, #"{"aps":{},"photoTitle":"Nebula"}"#), "a missing nested key")
        #expect(!matches(wanted, #"{"aps":{"content-available":1},"photoTitle":"Orion"}"#), "a different string")
        #expect(!matches(wanted, #"{"aps":{"content-available":1}, "photoTitle": "Nebula""#), "not JSON at all")
        #expect(!matches(wanted, #""photoTitle: Nebula""#), "a JSON string, not an object")
        #expect(matches(.object([(key: "mutable", value: .scalar("true"))]), #"{"mutable":true}"#))
        #expect(!matches(.object([(key: "mutable", value: .scalar("true"))]), #"{"mutable":"yes"}"#))
    }
}

enum VerdictFormatterProbe {
    static func explain(_ verdict: ChainVerdict, events: [TimelineEvent]) -> String {
        VerdictFormatter.explain(verdict, fileProblems: [], events: events)
    }
}

@Suite struct TerminalStyleTests {
    @Test func colouredOnlyOnATerminalWithoutNoColor() {
        #expect(TerminalStyle.shouldColour(isTerminal: true, environment: [:]))
        #expect(!TerminalStyle.shouldColour(isTerminal: false, environment: [:]))
        #expect(!TerminalStyle.shouldColour(isTerminal: true, environment: ["NO_COLOR": "1"]))
        #expect(!TerminalStyle.shouldColour(isTerminal: true, environment: ["TERM": "dumb"]))
    }

    @Test func verdictsAndEventKindsGetTheirColours() {
        #expect(
            TerminalStyle.colour("PASS silent-push-photo in 6.5 s")
                == "\u{1B}[32;1mPASS silent-push-photo in 6.5 s\u{1B}[0m")
        #expect(TerminalStyle.colour("  ✗ app.fetchCompleted  not seen").hasPrefix("\u{1B}[31m"))
        let event = TerminalStyle.colour("   6.776s  device.app.exited    cause=crashed")
        #expect(event == "   6.776s  \u{1B}[36mdevice.app.exited\u{1B}[0m    cause=crashed")
        #expect(TerminalStyle.colour("building: swift build") == "building: swift build", "other lines stay plain")
    }
}

@Suite struct LiveViewTests {
    final class Screen: Sendable {
        let written = LockedState("")
        func write(_ text: String) { written.withLock { $0 += text } }
    }

    func progress(_ bytes: Int, at seconds: Double) -> String {
        EventFormatter.line(
            TimelineEvent(
                sequence: 1, elapsed: seconds, date: Date(), kind: .transferProgress, source: "transfer",
                attributes: ["bytes": "\(bytes)", "expected": "400", "task": "1"]))!
    }

    @Test func onATerminalTheProgressBarIsRedrawnInPlace() {
        let screen = Screen()
        let view = LiveView(terminal: true, colour: false, write: screen.write)
        view.say("   0.100s  transfer.started   task=1")
        view.say(progress(100, at: 0.2))
        view.say(progress(400, at: 0.3))
        view.say("   0.400s  transfer.completed   bytes=400")
        let erase = "\r\u{1B}[2K"
        #expect(
            screen.written.withLock { $0 }
                == "   0.100s  transfer.started   task=1\n" + progress(100, at: 0.2) + erase + progress(400, at: 0.3)
                + "\n   0.400s  transfer.completed   bytes=400\n")
    }

    @Test func intoAPipeEveryLineIsWrittenWholeAndPlain() {
        let screen = Screen()
        let view = LiveView(terminal: false, colour: false, write: screen.write)
        view.say(progress(100, at: 0.2))
        view.say(progress(400, at: 0.3))
        view.say("PASS silent-push-photo in 6.5 s")
        #expect(
            screen.written.withLock { $0 } == progress(100, at: 0.2) + "\n" + progress(400, at: 0.3)
                + "\nPASS silent-push-photo in 6.5 s\n")
    }

    @Test func progressLinesAreToldByTheirKindColumn() {
        #expect(EventFormatter.isProgressLine(progress(100, at: 12.5)))
        #expect(progress(100, at: 12.5).hasSuffix("[########......................]  25% 100/400 bytes task 1"))
        #expect(!EventFormatter.isProgressLine("   0.400s  transfer.completed   bytes=400"))
        #expect(!EventFormatter.isProgressLine("app.log says transfer.progress"))
    }
}

/// Whatever an event carries, report.html stays well-formed: text escaped by Unicode scalar (a quote
/// with a combining mark is one character), class names reduced to safe characters, links
/// percent-encoded, and numbers that cannot be drawn left out of the plot.
@Suite struct HTMLReportEscapingTests {
    @Test func hostileStringsAreEscapedEverywhere() throws {
        let hostile = "\"\u{301} onmouseover=\"alert(1)\" <script>alert(2)</script> & 'x'"
        let events = [
            TimelineEvent(
                sequence: 1, elapsed: 0.5, date: Date(), kind: EventKind(hostile), source: hostile,
                attributes: ["step": hostile, "reason": hostile]),
            TimelineEvent(
                sequence: 2, elapsed: 1, date: Date(), kind: .serviceStarted, source: "harness",
                attributes: ["service": "media", "throttle": "inf B/s"]),
            TimelineEvent(
                sequence: 3, elapsed: 1.5, date: Date(), kind: .transferStarted, source: "transfer",
                attributes: ["session": hostile, "task": "1"]),
            TimelineEvent(
                sequence: 4, elapsed: 2, date: Date(), kind: .transferProgress, source: "transfer",
                attributes: ["session": hostile, "task": "1", "bytes": "nan"]),
            TimelineEvent(
                sequence: 5, elapsed: 3, date: Date(), kind: .transferProgress, source: "transfer",
                attributes: ["session": hostile, "task": "1", "bytes": "1000"]),
        ]
        let result = RunResult(
            scenario: "odd #name?", outcome: .failed(hostile), verdict: nil,
            reportDirectory: URL(fileURLWithPath: "/tmp/\(hostile)"), duration: .seconds(3), explanation: hostile)
        let page = HTMLReport.render(result, events: events)
        #expect(!page.contains("<script>alert"))
        #expect(!page.contains("onmouseover=\"alert"))
        let rawQuoteWithMark = "\"\u{301}"
        let escapedStart = "&quot;\u{301} onmouseover=&quot;alert(1)&quot; &lt;script&gt;"
        #expect(!page.contains(rawQuoteWithMark), "a quote before a combining mark is escaped too")
        #expect(page.contains(escapedStart))
        let plotStart = try #require(page.range(of: "<svg class=\"plot\""))
        let plot = page[plotStart.lowerBound...].prefix { _ in true }.split(separator: "</svg>", maxSplits: 1)[0]
        #expect(
            !plot.contains("nan") && !plot.contains("inf"), "nothing that cannot be drawn reaches the plot: \(plot)")
        #expect(plot.contains("no throttle configured"), "an infinite rate is no rate")
        #expect(plot.contains("data-series=\"1\""))
        let index = HTMLReport.batchIndex([result], seconds: 3, parallel: 1, folder: URL(fileURLWithPath: "/tmp/batch"))
        #expect(index.contains("href=\"odd%20%23name%3F/report.html\""), "\(index)")
        #expect(index.contains(">odd #name?</a>"))
    }
}
