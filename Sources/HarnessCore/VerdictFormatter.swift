import Foundation
import HarnessTimeline

/// The chain verdict and failure explanations, in words a person debugging the app can act on.
enum VerdictFormatter {
    static func chain(_ verdict: ChainVerdict) -> String {
        var lines = ["", "Chain:"]
        for link in verdict.links {
            if let event = link.event {
                lines.append("  ✓ " + padded(link.pattern.description) + String(format: "%9.3fs", event.elapsed))
            } else if let early = link.early {
                lines.append(
                    "  ✗ " + padded(link.pattern.description) + String(format: "%9.3fs", early.elapsed) + " too early")
            } else {
                lines.append("  ✗ " + padded(link.pattern.description) + "  not seen")
            }
        }
        for pattern in verdict.missing {
            lines.append("  ✗ eventually " + padded(pattern.description, 59) + "  not seen")
        }
        for (count, seen) in verdict.countProblems {
            lines.append("  ✗ count " + padded(count.description, 64) + "  seen \(seen)")
        }
        for (pattern, event) in verdict.violations {
            lines.append("  ✗ never " + padded(pattern.description, 64) + String(format: "%9.3fs", event.elapsed))
        }
        return lines.joined(separator: "\n")
    }

    /// The warnings a run raised that do not fail it, each once: a push Apple may delay, drop or refuse.
    static func warnings(events: [TimelineEvent]) -> [String] {
        var said: Set<String> = []
        return events.filter { $0.kind == .pushWarning }.compactMap { event in
            guard let warning = event["warning"], said.insert(warning).inserted else { return nil }
            return "warning: \(warning)"
        }
    }

    private static func padded(_ text: String, _ width: Int = 70) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// What most likely stopped the chain, in plain words, from the events that explain it.
    static func hint(events: [TimelineEvent]) -> String? {
        func last(_ kind: EventKind) -> TimelineEvent? { events.last { $0.kind == kind } }
        if let killed = last(.watchdogKilled) {
            return "the app was killed by the watchdog: \(killed["reason"] ?? "it overran its background time")."
        }
        if let failed = last(.transferFailed) {
            return "the download failed (\(failed["code"] ?? "?")): \(failed["error"] ?? "")."
        }
        if let lost = last(.transferFileLost) { return "the downloaded file was lost: \(lost["reason"] ?? "")." }
        if let held = last(.pushHeld),
            !events.contains(where: { $0.kind == .pushReleased && $0["apnsId"] == held["apnsId"] })
        {
            return "the device held the push back: \(held["reason"] ?? "")."
        }
        if let received = last(.pushReceived),
            ["notLaunchedAfterForceQuit", "ignoredNoBackgroundMode", "notSilent"].contains(received["decision"] ?? "")
        {
            let why =
                [
                    "notLaunchedAfterForceQuit": "the user force-quit the app, so iOS does not launch it for a push",
                    "ignoredNoBackgroundMode": "the app lacks remote-notification in UIBackgroundModes",
                    "notSilent": "the push has no content-available: 1, so it does not wake the app",
                ][received["decision"] ?? ""] ?? ""
            return "the push reached the device but did not wake the app: \(why)."
        }
        if let stored = last(.apnsStored), !events.contains(where: { $0.kind == .apnsDelivered }) {
            return "APNs stored the push instead of delivering it: \(stored["reason"] ?? "the device was unreachable")."
        }
        if let rejected = last(.apnsRejected) {
            return "APNs refused the push: \(rejected["status"] ?? "") \(rejected["reason"] ?? "")."
        }
        if let exited = last(.appExited), exited["cause"] == "crashed" {
            return "the app crashed (\(exited["termination"] ?? "")); its last output is in the timeline."
        }
        return nil
    }

    static func explain(_ verdict: ChainVerdict, fileProblems: [String], events: [TimelineEvent]) -> String {
        var lines: [String] = []
        for (pattern, event) in verdict.violations {
            lines.append(
                "\(pattern.kind) happened at \(String(format: "%.3f", event.elapsed))s, and the scenario says it never should."
            )
            if let reason = event["reason"] { lines.append("  reason: \(reason)") }
            if event.kind == .watchdogKilled {
                lines.append(
                    "  hint: call the fetch completion handler on every path, and within the budget; iOS kills the app otherwise."
                )
            }
        }
        if let broken = verdict.links.firstIndex(where: { $0.event == nil }) {
            let pattern = verdict.links[broken].pattern
            // The last link seen before it: what it had to follow.
            let previous = verdict.links[..<broken].last { $0.event != nil }?.event
            lines.append(
                "The chain broke at link \(broken + 1): expected \(pattern)\(previous.map { " after \($0.kind) (#\($0.sequence))" } ?? "")."
            )
            let sameKind = events.filter { $0.kind.rawValue == pattern.kind }
            if let early = verdict.links[broken].early, let previous {
                lines.append(
                    "  it came at \(String(format: "%.3f", early.elapsed)) s (#\(early.sequence)), before \(previous.kind) "
                        + "at \(String(format: "%.3f", previous.elapsed)) s: the order the scenario expects no longer holds"
                )
            } else if let seen = sameKind.last {
                lines.append(
                    "  seen instead: \(seen.kind) \(seen.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
                )
            } else {
                lines.append("  no \(pattern.kind) event was published at all.")
            }
            if let hint = hint(events: events) { lines.append("  hint: \(hint)") }
        }
        for pattern in verdict.missing {
            lines.append("\(pattern) never happened, and the scenario expects it eventually.")
        }
        for (count, seen) in verdict.countProblems {
            lines.append("Expected \(count); it happened \(seen) time\(seen == 1 ? "" : "s").")
        }
        lines.append(contentsOf: fileProblems)
        let tail = events.filter { $0.kind != .transferProgress && $0.kind != .appOutput }
            .compactMap(EventFormatter.line).suffix(8)
        lines.append("Last events:")
        lines.append(contentsOf: tail.map { "  " + $0 })
        return lines.joined(separator: "\n")
    }
}
