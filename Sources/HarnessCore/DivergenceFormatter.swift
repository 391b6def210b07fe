import Foundation
import HarnessTimeline
import Recording

/// The time the comparison counts from: the run's first step.
struct ReplayAnchor {
    var elapsed: Double

    init(_ events: [TimelineEvent]) {
        elapsed = events.first { $0.kind == .stepStarted }?.elapsed ?? 0
    }
}

/// A divergence in words, with the events around it side by side: the recording on the left, this
/// run on the right, the events where they part marked with `>`.
public enum DivergenceFormatter {
    static let column = 58

    /// The divergence of `actual` from `expected`, in words and side by side.
    public static func text(
        _ divergence: TimelineComparison.Divergence, expected: [TimelineEvent], actual: [TimelineEvent]
    ) -> String {
        text(divergence, recorded: ReplayAnchor(expected), run: ReplayAnchor(actual))
    }

    static func text(_ divergence: TimelineComparison.Divergence, recorded: ReplayAnchor, run: ReplayAnchor) -> String {
        let left = divergence.expectedAround.map { line($0, marked: $0 == divergence.expected, from: recorded) }
        let right = divergence.actualAround.map { line($0, marked: $0 == divergence.actual, from: run) }
        var text = "the first divergence from the recording: \(divergence.summary)\n"
        text += pad("recorded") + " | this run\n"
        for row in 0..<max(left.count, right.count) {
            let mine = row < left.count ? left[row] : ""
            let theirs = row < right.count ? right[row] : ""
            text += pad(mine) + " | " + theirs + "\n"
        }
        return text
    }

    /// One event as a row: its time since the first step, its kind and attributes, cut to the column.
    static func line(_ event: TimelineEvent, marked: Bool, from anchor: ReplayAnchor) -> String {
        let at = event.elapsed - anchor.elapsed
        let attributes = event.attributes.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = (marked ? "> " : "  ") + String(format: "%7.2f ", at) + event.kind.rawValue + " " + attributes
        return text.count > column ? String(text.prefix(column - 1)) + "…" : text
    }

    private static func pad(_ text: String) -> String {
        text.count >= column ? text : text + String(repeating: " ", count: column - text.count)
    }
}
