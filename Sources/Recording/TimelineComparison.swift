import Foundation
import HarnessTimeline

/// Compares a run's timeline with a recorded one and finds the first point where they part.
///
/// What must differ between two runs is normalised away: identifiers, tokens, ports, process ids,
/// absolute paths and times. Events are paired kind by kind, in order (the third `media.request` with
/// the third), and device by device (alice's `apns.delivered` with alice's), so that two services or two
/// devices racing each other cannot make equal runs look different; then each
/// pair must agree on its attributes, on its distance from the event before it within
/// ``Options/tolerance``, and on order wherever the recording had the two events further apart than
/// the tolerance.
public enum TimelineComparison {
    public struct Options: Sendable, Equatable {
        /// How far, in seconds, an event's distance from the event before it may move.
        public var tolerance: Double = 2
        /// Kinds whose number depends on timing or on output, not on behaviour.
        public var ignoredKinds: Set<String> = [
            "transfer.progress", "app.log", "device.app.output", "harness.leftover.removed",
            "harness.service.started", "harness.run.started", "harness.run.finished", "backend.output",
        ]
        /// Attributes whose values differ from run to run by nature.
        public var ignoredAttributes: Set<String> = [
            "pid", "url", "port", "step", "apnsId", "apns-id", "id", "objectId", "installationId", "token",
            "deviceToken",
            "elapsed", "seconds", "after", "took", "duration", "home", "container", "client", "location",
            "temporaryFile", "createdAt", "updatedAt", "pushId", "statusId", "pushStatusId", "installation",
            "taskIdentifier", "timestamp", "until", "pushTime", "errorMessage", "tokens",
        ]

        public init() {}
    }

    /// Where the runs part, with the events around it in both.
    public struct Divergence: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable {
            case missing, unexpected, different, timing, order
        }

        public var kind: Kind
        /// The recorded event the run did not match (nil for an event the recording lacks).
        public var expected: TimelineEvent?
        /// What the run did instead (nil when nothing came).
        public var actual: TimelineEvent?
        /// In words: "expected device.push.delivered {wake: resumed}, got {wake: launched}".
        public var summary: String
        /// Up to three events before and after, in each timeline.
        public var expectedAround: [TimelineEvent]
        public var actualAround: [TimelineEvent]

        public var description: String { summary }
    }

    /// The first divergence of `actual` from `expected`; nil when they are equivalent.
    public static func compare(expected: [TimelineEvent], actual: [TimelineEvent], options: Options = Options())
        -> Divergence?
    {
        let left = Normalised(expected, options: options)
        let right = Normalised(actual, options: options)
        var problems: [(at: Double, divergence: Divergence)] = []
        var pairs: [(expected: Int, actual: Int)] = []
        for kind in Set(left.byKind.keys).union(right.byKind.keys) {
            let mine = left.byKind[kind] ?? []
            let theirs = right.byKind[kind] ?? []
            for position in 0..<max(mine.count, theirs.count) {
                switch (position < mine.count ? mine[position] : nil, position < theirs.count ? theirs[position] : nil)
                {
                case (let e?, let a?):
                    pairs.append((e, a))
                    let differences = left.attributes[e].difference(from: right.attributes[a])
                    if !differences.isEmpty {
                        problems.append(
                            (
                                left.offset(e),
                                divergence(
                                    .different, e, a, left, right,
                                    "\(kind): expected \(describe(left.attributes[e], only: differences)), "
                                        + "got \(describe(right.attributes[a], only: differences))")
                            ))
                    }
                case (let e?, nil):
                    problems.append(
                        (
                            left.offset(e),
                            divergence(
                                .missing, e, nil, left, right,
                                "expected \(kind) \(describe(left.attributes[e])) (recorded at "
                                    + "\(seconds(left.offset(e)))), but it never happened")
                        ))
                case (nil, let a?):
                    problems.append(
                        (
                            right.offset(a),
                            divergence(
                                .unexpected, nil, a, left, right,
                                "\(kind) \(describe(right.attributes[a])) happened at \(seconds(right.offset(a))), "
                                    + "which the recording does not have")
                        ))
                case (nil, nil):
                    break
                }
            }
        }
        // Order, where the recording leaves no doubt about it; then timing: each event's distance from
        // the one before it (of those both runs have), so that one slow moment delays one gap and not
        // everything after it.
        let ordered = pairs.sorted { left.events[$0.expected].sequence < left.events[$1.expected].sequence }
        for (first, second) in zip(ordered, ordered.dropFirst()) {
            let recorded = left.offset(second.expected) - left.offset(first.expected)
            let now = right.offset(second.actual) - right.offset(first.actual)
            let kind = left.events[second.expected].kind.rawValue
            let previous = left.events[first.expected].kind.rawValue
            if recorded > options.tolerance, right.events[second.actual].sequence < right.events[first.actual].sequence
            {
                problems.append(
                    (
                        left.offset(second.expected),
                        divergence(
                            .order, second.expected, second.actual, left, right,
                            "\(kind) came before \(previous); the recording has it \(seconds(recorded)) after")
                    ))
            } else if abs(recorded - now) > options.tolerance {
                problems.append(
                    (
                        left.offset(second.expected),
                        divergence(
                            .timing, second.expected, second.actual, left, right,
                            "\(kind) came \(apart(now)) \(previous); the recording has it \(apart(recorded)) "
                                + "(tolerance \(seconds(options.tolerance)))")
                    ))
            }
        }
        return problems.min { $0.at < $1.at }?.divergence
    }

    private static func divergence(
        _ kind: Divergence.Kind, _ expected: Int?, _ actual: Int?, _ left: Normalised, _ right: Normalised,
        _ summary: String
    ) -> Divergence {
        let expectedEvent = expected.map { left.events[$0] }
        let actualEvent = actual.map { right.events[$0] }
        // Around the point: the recorded event's neighbours, and the run's at the same time.
        let at = expected.map { left.offset($0) } ?? actual.map { right.offset($0) } ?? 0
        return Divergence(
            kind: kind, expected: expectedEvent, actual: actualEvent, summary: summary,
            expectedAround: left.around(expected ?? left.index(near: at)),
            actualAround: right.around(actual ?? right.index(near: at)))
    }

    static func describe(_ attributes: [String: String], only keys: Set<String>? = nil) -> String {
        let shown = attributes.filter { keys?.contains($0.key) ?? true }.sorted { $0.key < $1.key }
        if shown.isEmpty { return keys == nil ? "" : "{}" }
        return "{" + shown.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    }

    static func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }

    /// How far one event came from another, in words: `4.38 s after`, or `4.38 s before` (never a
    /// negative "after").
    static func apart(_ value: Double) -> String { value < 0 ? "\(seconds(-value)) before" : "\(seconds(value)) after" }

    /// A timeline as compared: the events that count, their attributes normalised, their times from the
    /// first step.
    struct Normalised {
        var events: [TimelineEvent]
        var attributes: [[String: String]]
        var byKind: [String: [Int]] = [:]
        var anchor: Double

        init(_ all: [TimelineEvent], options: Options) {
            events = all.filter { !options.ignoredKinds.contains($0.kind.rawValue) }
            attributes = events.map { event in
                var normalised: [String: String] = [:]
                for (key, value) in event.attributes where !options.ignoredAttributes.contains(key) {
                    // Content digests say what arrived: they are compared as they are.
                    normalised[key] = Self.digestAttributes.contains(key) ? value : Self.normalise(value)
                }
                return normalised
            }
            anchor = all.first { $0.kind == .stepStarted }?.elapsed ?? all.first?.elapsed ?? 0
            // Paired kind by kind on each device: two devices' events interleave as they race.
            for (index, event) in events.enumerated() {
                let device = event.attributes["device"].map { " on \($0)" } ?? ""
                byKind[event.kind.rawValue + device, default: []].append(index)
            }
        }

        func offset(_ index: Int) -> Double { events[index].elapsed - anchor }

        func around(_ index: Int?) -> [TimelineEvent] {
            guard let index, !events.isEmpty else { return [] }
            return Array(events[max(0, index - 3)...min(events.count - 1, index + 3)])
        }

        func index(near offset: Double) -> Int? {
            events.indices.min { abs(self.offset($0) - offset) < abs(self.offset($1) - offset) }
        }

        /// Attributes that hold the digest of content, never an identifier.
        static let digestAttributes: Set<String> = ["sha256", "etag", "digest"]

        /// Hex runs, UUIDs, loopback ports and temporary paths become placeholders.
        static func normalise(_ value: String) -> String {
            var value = value
            for (pattern, placeholder) in Self.patterns {
                value = value.replacingOccurrences(of: pattern, with: placeholder, options: .regularExpression)
            }
            return value
        }

        static let patterns: [(String, String)] = [
            ("[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}", "<uuid>"),
            ("[0-9A-Fa-f]{16,}", "<hex>"),
            ("(127\\.0\\.0\\.1|localhost|\\[::1\\]):[0-9]+", "$1:<port>"),
            ("/[^ \"]*/(state|tmp|\\.harness)/[^ \"]*", "<path>"),
        ]
    }
}

extension [String: String] {
    /// The keys whose values differ, or that only one side has.
    fileprivate func difference(from other: [String: String]) -> Set<String> {
        Set(keys).union(other.keys).filter { self[$0] != other[$0] }
    }
}
