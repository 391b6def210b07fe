import Foundation
import HarnessTimeline

/// The chain verdict and failure explanations, in words a person debugging the app can act on.
enum VerdictFormatter {
    static func chain(_ verdict: ChainVerdict) -> String {
        var lines = ["", "Chain:"]
        for link in verdict.links {
            if let event = link.event {
                lines.append("  ✓ " + padded(link.pattern.description) + String(format: "%9.3fs", event.elapsed))
            } else {
                lines.append("  ✗ " + padded(link.pattern.description) + "  not seen")
            }
        }
        for (pattern, event) in verdict.violations {
            lines.append("  ✗ never " + padded(pattern.description, 64) + String(format: "%9.3fs", event.elapsed))
        }
        return lines.joined(separator: "\n")
    }

    private static func padded(_ text: String, _ width: Int = 70) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func explain(_ verdict: ChainVerdict, fileProblems: [String], events: [TimelineEvent]) -> String {
        var lines: [String] = []
        for (pattern, event) in verdict.violations {
            lines.append("\(pattern.kind) happened at \(String(format: "%.3f", event.elapsed))s, and the scenario says it never should.")
            if let reason = event["reason"] { lines.append("  reason: \(reason)") }
            if event.kind == .watchdogKilled {
                lines.append(
                    "  hint: call the fetch completion handler on every path, and within the budget; iOS kills the app otherwise.")
            }
        }
        if let broken = verdict.links.firstIndex(where: { $0.event == nil }) {
            let pattern = verdict.links[broken].pattern
            let previous = broken > 0 ? verdict.links[broken - 1].event : nil
            lines.append("The chain broke at link \(broken + 1): expected \(pattern)\(previous.map { " after \($0.kind) (#\($0.sequence))" } ?? "").")
            let sameKind = events.filter { $0.kind.rawValue == pattern.kind }
            if let seen = sameKind.last {
                lines.append("  seen instead: \(seen.kind) \(seen.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
            } else {
                lines.append("  no \(pattern.kind) event was published at all.")
            }
        }
        lines.append(contentsOf: fileProblems)
        let tail = events.filter { $0.kind != .transferProgress && $0.kind != .appOutput }
            .compactMap(EventFormatter.line).suffix(8)
        lines.append("Last events:")
        lines.append(contentsOf: tail.map { "  " + $0 })
        return lines.joined(separator: "\n")
    }
}
