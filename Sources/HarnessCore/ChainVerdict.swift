import DeviceProtocol
import Foundation
import HarnessTimeline

/// The outcome of matching a run's timeline against a scenario's expectation: each link of the chain
/// found (with its event) or not, and every event that should never have happened.
public struct ChainVerdict: Sendable {
    public struct Link: Sendable {
        public var pattern: EventPattern
        public var event: TimelineEvent?
        /// Not seen in its place, but seen too early: the last event matching it before the link it
        /// follows was seen.
        public var early: TimelineEvent?
    }

    public var links: [Link]
    public var violations: [(EventPattern, TimelineEvent)]
    /// `eventually` events not seen (yet).
    public var missing: [EventPattern] = []
    /// Counts that do not hold (yet), with the count seen.
    public var countProblems: [(CountExpectation, Int)] = []

    public var chainComplete: Bool { links.allSatisfy { $0.event != nil } }
    /// The chain and every `eventually` event are in.
    public var complete: Bool { chainComplete && missing.isEmpty }
    /// A count went past its maximum: waiting longer cannot fix it.
    public var overrun: Bool {
        countProblems.contains { count, seen in count.atMost.map { seen > $0 } ?? false }
    }
    public var passed: Bool { complete && violations.isEmpty && countProblems.isEmpty }
    /// Matches links in order: each must come after the one before it. A link not seen in its place does
    /// not stop the rest: each later link is looked for after the last link seen, and judged on what
    /// happened.
    public static func evaluate(
        _ expectation: Expectation, events: [TimelineEvent], fixtureDigest: (String) -> String?
    ) -> ChainVerdict {
        var links: [Link] = []
        var after = 0
        for pattern in expectation.chain {
            if let found = events.first(where: {
                $0.sequence > after && pattern.matches($0, fixtureDigest: fixtureDigest)
            }) {
                after = found.sequence
                links.append(Link(pattern: pattern, event: found))
            } else {
                let early = events.last { $0.sequence <= after && pattern.matches($0, fixtureDigest: fixtureDigest) }
                links.append(Link(pattern: pattern, event: nil, early: early))
            }
        }
        let violations = expectation.never.flatMap { pattern in
            events.filter { pattern.matches($0, fixtureDigest: fixtureDigest) }.map { (pattern, $0) }
        }
        let missing = expectation.eventually.filter { pattern in
            !events.contains { pattern.matches($0, fixtureDigest: fixtureDigest) }
        }
        let countProblems = expectation.counts.compactMap { count -> (CountExpectation, Int)? in
            let seen = events.filter { count.pattern.matches($0, fixtureDigest: fixtureDigest) }.count
            return count.holds(seen) ? nil : (count, seen)
        }
        return ChainVerdict(links: links, violations: violations, missing: missing, countProblems: countProblems)
    }
}

extension EventPattern {
    func matches(_ event: TimelineEvent, fixtureDigest: (String) -> String?) -> Bool {
        guard event.kind.rawValue == kind else { return false }
        return attributes.allSatisfy { key, match in
            guard let value = event.attributes[key] else { return false }
            switch match {
            case .equals(let expected): return value == expected
            case .contains(let text): return value.contains(text)
            case .sha256OfFixture(let path): return fixtureDigest(path) == value
            case .json(let subset):
                guard let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(value.utf8)) else {
                    return false
                }
                return subset.matches(parsed)
            }
        }
    }
}
