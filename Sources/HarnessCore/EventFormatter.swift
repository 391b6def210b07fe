import Foundation
import HarnessTimeline

/// Turns timeline events into the lines of the live view.
public enum EventFormatter {
    static let shownAttributes: [String: [String]] = [
        EventKind.serviceStarted.rawValue: ["service", "url", "throttle"],
        EventKind.appLaunched.rawValue: ["bundleId", "reason", "pid"],
        EventKind.appStateChanged.rawValue: ["bundleId", "state"],
        EventKind.appExited.rawValue: ["bundleId", "cause", "termination"],
        EventKind.appLog.rawValue: ["message"],
        EventKind.appOutput.rawValue: ["line"],
        EventKind.parseInstallationSaved.rawValue: ["objectId", "deviceToken", "created"],
        EventKind.parsePushAccepted.rawValue: ["pushStatusId", "recipients"],
        EventKind.parsePushSent.rawValue: ["apnsId"],
        EventKind.parsePushFailed.rawValue: ["status", "reason", "error"],
        EventKind.apnsAccepted.rawValue: ["apnsId", "pushType", "priority", "topic"],
        EventKind.apnsRejected.rawValue: ["status", "reason"],
        EventKind.apnsDelivered.rawValue: ["apnsId"],
        EventKind.pushReceived.rawValue: ["appState", "decision"],
        EventKind.pushDelivered.rawValue: ["wake"],
        EventKind.watchdogKilled.rawValue: ["reason"],
        EventKind.transferStarted.rawValue: ["session", "url"],
        EventKind.transferCompleted.rawValue: ["bytes", "sha256"],
        EventKind.transferFailed.rawValue: ["code", "error"],
        EventKind.transferFileLost.rawValue: ["reason"],
        EventKind.appLocalNotification.rawValue: ["alertBody", "badge"],
        EventKind.appFetchCompleted.rawValue: ["result"],
        EventKind.stepStarted.rawValue: ["step"],
        EventKind.mediaRequest.rawValue: ["method", "path", "status", "range"],
    ]

    public static func line(_ event: TimelineEvent) -> String? {
        if event.kind == .transferProgress { return progressLine(event) }
        if event.kind == .mediaResponseFinished || event.kind == .apnsDeviceRegistered { return nil }
        var keys = shownAttributes[event.kind.rawValue] ?? event.attributes.keys.sorted()
        // Which of several devices it happened on comes first.
        if event["device"] != nil { keys = ["device"] + keys.filter { $0 != "device" } }
        let details = keys.compactMap { key in
            event.attributes[key].flatMap { $0.isEmpty ? nil : "\(key)=\($0)" }
        }.joined(separator: " ")
        return prefix(event) + details
    }

    static func progressLine(_ event: TimelineEvent) -> String {
        let bytes = Double(event["bytes"] ?? "") ?? 0
        let expected = Double(event["expected"] ?? "") ?? -1
        guard expected > 0 else {
            return prefix(event) + String(format: "%.0f bytes", bytes)
        }
        let fraction = min(1, bytes / expected)
        let width = 30
        let filled = Int((fraction * Double(width)).rounded())
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return prefix(event) + "[\(bar)] " + String(format: "%3.0f%% %.0f/%.0f bytes", fraction * 100, bytes, expected)
            + (event["task"].map { " task \($0)" } ?? "")
    }

    /// Whether `line` is a progress bar: its kind column says `transfer.progress`.
    static func isProgressLine(_ line: String) -> Bool {
        let columns = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        return columns.count >= 2 && columns[0].hasSuffix("s") && columns[1] == EventKind.transferProgress.rawValue
    }

    /// Elapsed time and the event kind in aligned columns.
    private static func prefix(_ event: TimelineEvent) -> String {
        let kind = event.kind.rawValue
        return String(format: "%8.3fs  ", event.elapsed) + kind + String(repeating: " ", count: max(1, 35 - kind.count))
    }
}
