import Foundation
import HarnessTimeline
import Testing

@Suite struct TimelineTests {
    @Test func eventsAreNumberedInPublishOrder() {
        let timeline = Timeline()
        timeline.publish("a.one", source: "test")
        timeline.publish("a.two", source: "test", ["k": "v"])
        let events = timeline.events
        #expect(events.map(\.sequence) == [1, 2])
        #expect(events.map(\.kind.rawValue) == ["a.one", "a.two"])
        #expect(events[1]["k"] == "v")
        #expect(events[0].elapsed <= events[1].elapsed)
    }

    @Test func aLimitedTimelineKeepsTheNewestEventsAndKeepsCounting() {
        let timeline = Timeline(retention: 100)
        for index in 1...1_000 { timeline.publish("a.event", source: "test", ["index": "\(index)"]) }
        let events = timeline.events
        #expect(events.count == 100)
        #expect(events.last?.sequence == 1_000)
        #expect(events.last?["index"] == "1000")
        #expect(events.map(\.sequence) == Array((1_001 - events.count)...1_000))
    }

    @Test func aSubscriberSeesEventsPublishedBeforeItSubscribed() async {
        let timeline = Timeline()
        timeline.publish("early", source: "test")
        let stream = timeline.subscribe()
        timeline.publish("late", source: "test")
        timeline.finish()
        var kinds: [String] = []
        for await event in stream { kinds.append(event.kind.rawValue) }
        #expect(kinds == ["early", "late"])
    }

    @Test func waitForReturnsTheFirstMatchingEventEvenIfPublishedLater() async throws {
        let timeline = Timeline()
        timeline.publish("other", source: "test")
        async let found = timeline.waitFor("wanted", timeout: .seconds(30)) { $0.kind == "wanted" }
        timeline.publish("wanted", source: "test", ["n": "1"])
        timeline.publish("wanted", source: "test", ["n": "2"])
        let event = try await found
        #expect(event["n"] == "1")
    }

    @Test func aLiveSubscriberGetsEventsPublishedWhileItWaits() async throws {
        let timeline = Timeline()
        let stream = timeline.subscribe()
        var iterator = stream.makeAsyncIterator()
        timeline.publish("first", source: "test")
        #expect(await iterator.next()?.kind == "first")
        // Published only after the subscriber has drained everything: the live path, not the replay.
        timeline.publish("second", source: "test")
        #expect(await iterator.next()?.kind == "second")
        timeline.finish()
        #expect(await iterator.next() == nil)
    }

    @Test func waitForNamesTheEventThatNeverCame() async {
        let timeline = Timeline()
        await #expect(throws: TimelineWaitTimeout.self) {
            _ = try await timeline.waitFor("the missing event", timeout: .milliseconds(50)) { _ in false }
        }
        do {
            _ = try await timeline.waitFor("the missing event", timeout: .milliseconds(10)) { _ in false }
        } catch let timeout as TimelineWaitTimeout {
            #expect(timeout.message.contains("the missing event"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

@Suite struct EventAttributesTests {
    @Test func looksUpSetsAndRemovesByName() {
        var attributes: EventAttributes = ["a": "1", "b": "2"]
        #expect(attributes["a"] == "1")
        #expect(attributes["c"] == nil)
        attributes["a"] = "one"
        attributes["c"] = "3"
        attributes["b"] = nil
        #expect(attributes.keys == ["a", "c"])
        #expect(attributes.dictionary == ["a": "one", "c": "3"])
        #expect(attributes.merging(["a": "ignored", "d": "4"]).dictionary == ["a": "one", "c": "3", "d": "4"])
    }

    @Test func comparesAndEncodesAsAJSONObject() throws {
        let attributes: EventAttributes = ["b": "2", "a": "1"]
        #expect(attributes == ["a": "1", "b": "2"], "order does not matter")
        #expect(attributes != ["a": "1"])
        #expect(attributes != ["a": "1", "b": "3"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(attributes)
        #expect(String(decoding: json, as: UTF8.self) == #"{"a":"1","b":"2"}"#)
        #expect(try JSONDecoder().decode(EventAttributes.self, from: json) == attributes)
    }

    /// Two views of one object, as FakeAPNs's accepted push gives its events.
    final class Source: EventAttributeSource {
        func forEachAttribute(view: Int, _ body: (String, String) -> Void) {
            body("id", "7")
            if view == 1 { body("extra", "yes") }
        }
    }

    @Test func fieldsReadFromASourceActAsTheSamePairs() throws {
        let source = Source()
        var attributes = EventAttributes(source: source, view: 1)
        #expect(attributes == ["id": "7", "extra": "yes"])
        #expect(EventAttributes(source: source, view: 0) == ["id": "7"])
        #expect(attributes["extra"] == "yes")
        #expect(attributes["missing"] == nil)
        #expect(attributes.count == 2)
        var visited: [String] = []
        attributes.forEachField { name, value in visited.append("\(name)=\(value)") }
        #expect(visited == ["id=7", "extra=yes"])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(attributes), as: UTF8.self) == #"{"extra":"yes","id":"7"}"#)
        // Changed, they are read out into pairs; the source's other views are untouched.
        attributes["id"] = "8"
        attributes.merge(["device": "iPad"])
        #expect(attributes == ["id": "8", "extra": "yes", "device": "iPad"])
        #expect(EventAttributes(source: source, view: 1) == ["id": "7", "extra": "yes"])
    }
}

@Suite struct StampedTimelineTests {
    @Test func aStampedViewAddsItsAttributesAndSharesTheEvents() async throws {
        let timeline = Timeline()
        let alice = timeline.stamping(["device": "alice"])
        let mine = alice.stamping(["app": "chat"])
        timeline.publish("harness.step.started", source: "harness", ["step": "one"])
        alice.publish("device.app.state", source: "device", ["state": "active"])
        mine.publish("app.log", source: "app", ["message": "hi", "device": "given"])
        let events = timeline.events
        #expect(events.map(\.sequence) == [1, 2, 3])
        #expect(events[0]["device"] == nil)
        #expect(events[1]["device"] == "alice" && events[1]["state"] == "active")
        #expect(events[2]["device"] == "given", "an attribute the publisher gives keeps its value")
        #expect(events[2]["app"] == "chat")
        #expect(alice.events.map(\.sequence) == [1, 2, 3], "a view reads every event")
        let waited = try await alice.waitFor("the first event", timeout: .seconds(60)) { _ in true }
        #expect(waited.sequence == 1)
    }
}

@Suite struct TimelineBudgetTests {
    @Test func aBudgetedTimelineKeepsItsNewestEventsWithinTheBudget() {
        let event = TimelineEvent(
            sequence: 1, elapsed: 0, date: .init(), kind: "a.event", source: "test", attributes: ["index": "1000"])
        let budget = 100 * Timeline.estimatedBytes(of: event)
        let timeline = Timeline(budget: budget)
        for index in 1...1_000 { timeline.publish("a.event", source: "test", ["index": "\(index)"]) }
        let events = timeline.events
        #expect(events.reduce(0) { $0 + Timeline.estimatedBytes(of: $1) } <= budget)
        #expect((50...100).contains(events.count))
        #expect(events.map(\.sequence) == Array((1_001 - events.count)...1_000))
    }
}
