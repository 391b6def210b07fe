import Foundation
import HarnessTimeline

/// What a backend did in a recording, for a replay that runs without it (`harness replay DIR
/// --without-backend NAME`): the answers it gave the apps (the entries recorded on `app→backend`), and
/// what it did on its own — the notifications it sent (the legacy gateway's frames, HTTP/2 requests
/// to APNs, pushes through Parse), the feedback service it read, the lines it printed — each tied to
/// the request it followed and how long after that request came, so that a replay on a slower machine keeps cause
/// before effect. A value: the stand-in asks it what is due once it has answered an entry.
public struct BackendScript: Sendable, Equatable {
    /// One thing the backend did on its own.
    public enum Action: Sendable, Equatable {
        /// A notification through the legacy binary gateway: entry `entry` of the HAR.
        case legacyNotification(entry: Int)
        /// A request to APNs's HTTP/2 provider API: entry `entry`.
        case providerRequest(entry: Int)
        /// A push through Parse (`POST …/push`): entry `entry`.
        case parsePush(entry: Int)
        /// A read of APNs's feedback service with a certificate for `topic`.
        case feedbackRead(topic: String)
        /// A line the backend printed.
        case output(line: String)
    }

    /// An action, due `delay` milliseconds after the request of entry `after` came (after the stand-in
    /// started, when nil: the backend did it before any app asked it anything). A request, not its
    /// answer: a backend prints, and may push, while it answers.
    public struct Cue: Sendable, Equatable {
        public var after: Int?
        public var delay: Double
        public var action: Action

        public init(after: Int?, delay: Double, action: Action) {
            self.after = after
            self.delay = delay
            self.action = action
        }
    }

    /// The service name its answers were recorded under: `backend:<name>`.
    public static func service(of backend: String) -> String { "backend:\(backend)" }

    public let backend: String
    /// The HAR entries of its answers to the apps, in recorded order.
    public let answers: [Int]
    public let cues: [Cue]
    private var cued: Set<Int> = []

    /// - Parameters:
    ///   - entries: the cassette's HAR entries.
    ///   - events: the recorded timeline.
    ///   - timelineAtStart: the timeline's clock, in seconds, when the cassette's began
    ///     (``CassetteMeta/timelineAtStart``); without it, events are placed as if both began together.
    public init(backend: String, entries: [HAR.Entry], events: [TimelineEvent], timelineAtStart: Double?) {
        self.backend = backend
        let service = Self.service(of: backend)
        let answers = entries.indices.filter { entries[$0].service == service && entries[$0].link == "app→backend" }
        self.answers = answers
        // When each request came.
        let ends = answers.map { (entry: $0, end: entries[$0].offset ?? 0) }.sorted { $0.end < $1.end }
        func cue(at moment: Double, _ action: Action) -> Cue {
            // A day at most: numbers from a file are bounded before a clock adds them.
            func bounded(_ delay: Double) -> Double { delay.isFinite ? min(max(delay, 0), 86_400_000) : 0 }
            guard let anchor = ends.last(where: { $0.end <= moment }) else {
                return Cue(after: nil, delay: bounded(moment), action: action)
            }
            return Cue(after: anchor.entry, delay: bounded(moment - anchor.end), action: action)
        }
        var timed: [(at: Double, cue: Cue)] = []
        for (index, entry) in entries.enumerated() {
            let at = entry.offset ?? 0
            let url = entry.request.url
            if (entry.requestHeader("user-agent") ?? "").hasPrefix(Self.harnessUserAgent) { continue }
            if entry.link == "provider→apns" {
                let action: Action =
                    url.hasPrefix("apns-legacy://")
                    ? .legacyNotification(entry: index) : .providerRequest(entry: index)
                timed.append((at, cue(at: at, action)))
            } else if entry.link == "backend→parse", entry.request.method == "POST",
                URLComponents(string: url)?.path.hasSuffix("/push") == true
            {
                timed.append((at, cue(at: at, .parsePush(entry: index))))
            }
        }
        let lead = (timelineAtStart ?? 0) * 1000
        for event in events {
            let at = event.elapsed * 1000 - lead
            if event.kind == .apnsFeedbackRead, let topic = event["topic"] {
                timed.append((at, cue(at: at, .feedbackRead(topic: topic))))
            } else if event.kind == .backendOutput, event["backend"] == backend, let line = event["line"] {
                timed.append((at, cue(at: at, .output(line: line))))
            }
        }
        cues = timed.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element.cue)
    }

    /// The beginning of the `User-Agent` of the harness's own requests (a `push` step's push through
    /// Parse, FakeParse's requests to APNs): what the harness sends is not the backend's to send again.
    public static let harnessUserAgent = "PushHarness"

    /// What is due once the stand-in has answered with `entry` (nil: once it has started), each only
    /// the first time: an entry answered again (a client asking twice) repeats nothing.
    public mutating func answered(_ entry: Int?) -> [Cue] {
        if let entry {
            guard !cued.contains(entry) else { return [] }
            cued.insert(entry)
        }
        return cues.filter { $0.after == entry }
    }
}

/// The recording's device tokens, each with what it stands for in a replay: the token the same
/// device (by name) has for the same topic now. Tokens are new in every run; a backend's recorded
/// notification names the recorded one.
public struct RecordedTokens: Sendable, Equatable {
    /// A recorded token's device and topic, as `apns.device.registered` gave them (the device's name
    /// empty for a scenario's one unnamed device).
    public struct Owner: Sendable, Equatable, Hashable {
        public var device: String
        public var topic: String
    }

    public let owners: [String: Owner]

    public init(recorded events: [TimelineEvent]) {
        var owners: [String: Owner] = [:]
        for event in events where event.kind == .apnsDeviceRegistered {
            guard let token = event["deviceToken"], let topic = event["topic"] else { continue }
            owners[token.lowercased()] = Owner(device: event["device"] ?? "", topic: topic)
        }
        self.owners = owners
    }

    /// Recorded token → the token of its device and topic among `current` events; a recorded token
    /// whose device has registered no token now is left out.
    public func replacements(current events: [TimelineEvent]) -> [String: String] {
        var now: [Owner: String] = [:]
        for event in events where event.kind == .apnsDeviceRegistered {
            guard let token = event["deviceToken"], let topic = event["topic"] else { continue }
            now[Owner(device: event["device"] ?? "", topic: topic)] = token.lowercased()
        }
        var replacements: [String: String] = [:]
        for (token, owner) in owners {
            if let current = now[owner] { replacements[token] = current }
        }
        return replacements
    }

    /// `text` with each recorded token replaced by its replacement (hex in any case).
    public static func replacing(_ replacements: [String: String], in text: String) -> String {
        var text = text
        for (recorded, current) in replacements where text.localizedCaseInsensitiveContains(recorded) {
            text = text.replacingOccurrences(of: recorded, with: current, options: .caseInsensitive)
        }
        return text
    }
}

extension BackendScript {
    /// A timeline as a replay standing in for `backend` compares it, the recorded one and its own: the
    /// events of the backend's process (`backend.started`, `backend.exited`, `backend.stopped`) left
    /// out, as no process runs; its `backend.ready` saying how the stand-in is ready; and how providers'
    /// connections to APNs ended (`apns.connection.closed`) left out, as the stand-in's connections are
    /// its own (a Python backend ends TLS without close_notify, which APNs notes; the stand-in does not).
    public static func standingIn(for backend: String, in events: [TimelineEvent], readiness: String) -> [TimelineEvent]
    {
        let process: Set<EventKind> = [.backendStarted, .backendExited, .backendStopped]
        return events.compactMap { event in
            if event.kind == .apnsConnectionClosed { return nil }
            guard event["backend"] == backend, event.source == "backend" else { return event }
            if process.contains(event.kind) { return nil }
            guard event.kind == .backendReady else { return event }
            var ready = event
            ready.attributes["how"] = readiness
            return ready
        }
    }
}

/// A recorded `apns-expiration` in a replay: the same time after the request, not the same moment. An
/// expiry is an absolute time (epoch seconds), so one sent again as recorded would already be past;
/// it moves by as long as the replay comes after the recording. `0` ("do not store") stays `0`; a
/// value that is not a number, or a recording without a readable `startedDateTime`, stays as it was.
public enum RecordedExpiry {
    public static func shifted(_ value: String, recordedAt: String, now: Date) -> String {
        guard let expiry = UInt32(value), expiry != 0, let recorded = date(recordedAt) else { return value }
        let moved = Double(expiry) + now.timeIntervalSince(recorded)
        guard moved.isFinite else { return value }
        return String(UInt32(min(max(moved.rounded(), 1), Double(UInt32.max))))
    }

    static func date(_ text: String) -> Date? {
        let formats = [
            Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle(),
        ]
        for format in formats { if let date = try? format.parse(text) { return date } }
        return nil
    }
}
