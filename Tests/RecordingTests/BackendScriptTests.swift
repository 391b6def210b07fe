import Foundation
import HarnessTimeline
import Recording
import Testing

/// What a replay without the backend does again, and when: a test per rule.
struct BackendScriptTests {
    static func entry(
        _ url: String, link: String, service: String, offset: Double, body: String? = nil,
        headers: [(String, String)] = []
    ) -> HAR.Entry {
        var entry = HAR.Entry(
            startedDateTime: "2026-11-28T08:00:00.000Z",
            request: HAR.Request(
                method: "POST", url: url, httpVersion: "HTTP/1.1",
                headers: headers.map { HAR.Header(name: $0.0, value: $0.1) },
                postData: body.map { HAR.PostData(mimeType: "", text: $0) }),
            response: HAR.Response(
                status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [],
                content: HAR.Content(size: 0, mimeType: "")),
            timings: HAR.Timings(send: 0, wait: 5, receive: 0))
        entry.link = link
        entry.service = service
        entry.offset = offset
        return entry
    }

    static func event(_ at: Double, _ kind: EventKind, _ attributes: [String: String], source: String = "apns")
        -> TimelineEvent
    {
        TimelineEvent(
            sequence: 0, elapsed: at, date: Date(), kind: kind, source: source, attributes: EventAttributes(attributes))
    }

    static let entries = [
        entry("backend://chat/api.php", link: "app→backend", service: "backend:chat", offset: 100, body: "cmd=join"),
        entry("backend://chat/api.php", link: "app→backend", service: "backend:chat", offset: 200, body: "cmd=message"),
        entry(
            "apns-legacy://127.0.0.1:2195/3/device/ab", link: "provider→apns", service: "apns", offset: 212,
            body: "{}"),
        entry("https://127.0.0.1:2197/3/device/cd", link: "provider→apns", service: "apns", offset: 230, body: "{}"),
        entry("http://127.0.0.1:1337/parse/push", link: "backend→parse", service: "parse", offset: 240, body: "{}"),
        entry(
            "http://127.0.0.1:1337/parse/push", link: "backend→parse", service: "parse", offset: 250, body: "{}",
            headers: [("User-Agent", BackendScript.harnessUserAgent)]),
        entry("http://127.0.0.1:44447/p.jpg", link: "transfer→media", service: "media", offset: 260),
    ]

    @Test func eachThingTheBackendDidFollowsTheLastRequestThatCameBeforeIt() {
        // The timeline's clock read 1 s when the cassette's began: its events are placed on the entries'.
        let events = [
            Self.event(1.05, .backendOutput, ["backend": "chat", "line": "listening"], source: "backend"),
            Self.event(1.201, .backendOutput, ["backend": "chat", "line": "message"], source: "backend"),
            Self.event(1.21, .apnsFeedbackRead, ["topic": "com.example.chat"]),
            Self.event(1.3, .backendOutput, ["backend": "other", "line": "not mine"], source: "backend"),
        ]
        let script = BackendScript(backend: "chat", entries: Self.entries, events: events, timelineAtStart: 1)
        #expect(script.answers == [0, 1])
        #expect(
            script.cues == [
                .init(after: nil, delay: 50, action: .output(line: "listening")),
                .init(after: 1, delay: 1, action: .output(line: "message")),
                .init(after: 1, delay: 10, action: .feedbackRead(topic: "com.example.chat")),
                .init(after: 1, delay: 12, action: .legacyNotification(entry: 2)),
                .init(after: 1, delay: 30, action: .providerRequest(entry: 3)),
                .init(after: 1, delay: 40, action: .parsePush(entry: 4)),
            ])
    }

    @Test func theHarnesssOwnPushesAndOtherServicesAreNotTheBackends() {
        let script = BackendScript(backend: "chat", entries: Self.entries, events: [], timelineAtStart: nil)
        let entries = script.cues.compactMap { cue -> Int? in
            switch cue.action {
            case .legacyNotification(let entry), .providerRequest(let entry), .parsePush(let entry): entry
            default: nil
            }
        }
        #expect(entries == [2, 3, 4])
    }

    @Test func whatFollowedAnAnswerIsDoneOnceThoughTheAnswerIsGivenTwice() {
        var script = BackendScript(backend: "chat", entries: Self.entries, events: [], timelineAtStart: 0)
        #expect(script.answered(0).isEmpty)
        #expect(script.answered(1).count == 3)
        #expect(script.answered(1).isEmpty)
    }

    @Test func delaysFromAFileAreBoundedAndNeverNegative() {
        let events = [
            Self.event(-5, .backendOutput, ["backend": "chat", "line": "before"], source: "backend"),
            Self.event(1e15, .backendOutput, ["backend": "chat", "line": "far"], source: "backend"),
        ]
        let script = BackendScript(backend: "chat", entries: [], events: events, timelineAtStart: 0)
        #expect(script.cues.map(\.delay) == [0, 86_400_000])
    }

    @Test func theComparedTimelineLosesTheBackendsProcessAndConnectionsAndSaysHowTheStandInIsReady() {
        let events = [
            Self.event(0.1, .backendStarted, ["backend": "chat", "pid": "12"], source: "backend"),
            Self.event(0.2, .backendReady, ["backend": "chat", "how": "GET /health"], source: "backend"),
            Self.event(0.3, .backendOutput, ["backend": "chat", "line": "hi"], source: "backend"),
            Self.event(0.4, .backendStopped, ["backend": "chat", "how": "SIGTERM"], source: "backend"),
            Self.event(0.5, .backendStopped, ["backend": "other", "how": "SIGTERM"], source: "backend"),
            Self.event(0.6, .apnsConnectionClosed, ["why": "uncleanShutdown", "client": "x"]),
        ]
        let compared = BackendScript.standingIn(for: "chat", in: events, readiness: "a stand-in")
        #expect(compared.map(\.kind) == [.backendReady, .backendOutput, .backendStopped])
        #expect(compared[0]["how"] == "a stand-in")
        #expect(compared[2]["backend"] == "other")
    }

    @Test func aRecordedTokenStandsForTheTokenItsDeviceHasNow() {
        let recorded = RecordedTokens(recorded: [
            Self.event(1, .apnsDeviceRegistered, ["device": "alice", "deviceToken": "AA11", "topic": "t"]),
            Self.event(1, .apnsDeviceRegistered, ["device": "bob", "deviceToken": "bb22", "topic": "t"]),
        ])
        let now = recorded.replacements(current: [
            Self.event(1, .apnsDeviceRegistered, ["device": "alice", "deviceToken": "cc33", "topic": "t"]),
            Self.event(1, .apnsDeviceRegistered, ["device": "bob", "deviceToken": "dd44", "topic": "other"]),
        ])
        #expect(now == ["aa11": "cc33"])
        #expect(RecordedTokens.replacing(now, in: "/3/device/AA11 and bb22") == "/3/device/cc33 and bb22")
    }

    @Test func aFormBodyChoosesAmongRequestsThatDifferOnlyThere() {
        let entries = [
            Self.entry(
                "backend://chat/api.php", link: "app→backend", service: "backend:chat", offset: 1,
                body: "cmd=join&udid=1&name=Alice"),
            Self.entry(
                "backend://chat/api.php", link: "app→backend", service: "backend:chat", offset: 2,
                body: "cmd=join&udid=2&name=Bob"),
        ]
        var playback = Playback(entries: entries, service: "backend:chat")
        // Bob asks first this time, with a udid of this run: his own JOIN answers him.
        #expect(
            playback.answer(method: "POST", target: "/api.php", headers: [], body: "cmd=join&udid=9&name=Bob")
                == .entry(1))
        #expect(
            playback.answer(method: "POST", target: "/api.php", headers: [], body: "cmd=join&udid=8&name=Alice")
                == .entry(0))
        // Without a body, recorded order, then the last again.
        var plain = Playback(entries: entries, service: "backend:chat")
        #expect(plain.answer(method: "POST", target: "/api.php", headers: []) == .entry(0))
        #expect(BodyLikeness.score("a=1&b=2", "a=1&b=2") == Int.max)
        #expect(BodyLikeness.score("a=1&b=2", "b=2&c=3") == 1)
        #expect(BodyLikeness.score("{\"a\":1}", "{\"a\":2}") == 0)
        #expect(BodyLikeness.score(nil, "a=1") == 0)
    }

    @Test func aRecordedExpiryMovesByAsLongAsTheReplayComesAfterTheRecording() {
        let recorded = "2026-11-28T08:00:00.000Z"
        let hourLater = Date(timeIntervalSince1970: 1_795_852_800 + 3600)
        #expect(RecordedExpiry.shifted("1795852860", recordedAt: recorded, now: hourLater) == "1795856460")
        #expect(RecordedExpiry.shifted("0", recordedAt: recorded, now: hourLater) == "0")
        #expect(RecordedExpiry.shifted("soon", recordedAt: recorded, now: hourLater) == "soon")
        #expect(RecordedExpiry.shifted("1795852860", recordedAt: "yesterday", now: hourLater) == "1795852860")
        #expect(RecordedExpiry.shifted("4294967295", recordedAt: recorded, now: hourLater) == "4294967295")
    }

    @Test func aReplaysPushStepsSendTheHarnesssOwnRecordedPushesNotTheBackends() {
        let marked = RecordedPushes(entries: Self.entries)
        #expect(marked.pushes.map(\.entry) == [5])
        // Recorded before the harness marked its own: every push, as then.
        let unmarked = RecordedPushes(entries: Self.entries.filter { $0.requestHeader("user-agent") == nil })
        #expect(unmarked.pushes.map(\.entry) == [4])
    }
}
