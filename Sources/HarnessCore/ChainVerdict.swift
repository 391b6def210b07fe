import Foundation
import HarnessTimeline

/// The outcome of matching a run's timeline against a scenario's expectation: each link of the chain
/// found (with its event) or not, and every event that should never have happened.
public struct ChainVerdict: Sendable {
    public struct Link: Sendable {
        public var pattern: EventPattern
        public var event: TimelineEvent?
    }

    public var links: [Link]
    public var violations: [(EventPattern, TimelineEvent)]

    public var chainComplete: Bool { links.allSatisfy { $0.event != nil } }
    public var passed: Bool { chainComplete && violations.isEmpty }

    /// Matches links in order: each must come after the one before it.
    public static func evaluate(
        _ expectation: Expectation, events: [TimelineEvent], fixtureDigest: (String) -> String?
    ) -> ChainVerdict {
        var links: [Link] = []
        var after = 0
        var broken = false
        for pattern in expectation.chain {
            let found = broken ? nil : events.first { $0.sequence > after && pattern.matches($0, fixtureDigest: fixtureDigest) }
            if let found { after = found.sequence } else { broken = true }
            links.append(Link(pattern: pattern, event: found))
        }
        let violations = expectation.never.flatMap { pattern in
            events.filter { pattern.matches($0, fixtureDigest: fixtureDigest) }.map { (pattern, $0) }
        }
        return ChainVerdict(links: links, violations: violations)
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
            }
        }
    }
}
