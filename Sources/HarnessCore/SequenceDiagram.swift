import Foundation
import HarnessTimeline

/// The run as a sequence diagram: a lifeline each for Parse, APNs, the device (SpringBoard and
/// nsurlsessiond), the app and the media server, a device and an app lifeline for each named device of
/// the run, and one for its backends if it has any; an arrow for each message that crossed between two
/// of them, a note for what happened inside one, and a rule for each scenario step. The chain's links
/// carry their number, forbidden events and failures are red, and links never seen are listed at the end.
struct SequenceDiagram {
    /// A kind of lifeline; the device and the app have one per device.
    enum Lane: Int, CaseIterable {
        case parse, apns, device, app, media, backend

        var title: String {
            switch self {
            case .parse: "Parse"
            case .apns: "APNs"
            case .device: "Device"
            case .app: "App"
            case .media: "Media server"
            case .backend: "Backends"
            }
        }

        /// The lane of an event's publisher; the device's transfers are nsurlsessiond's, on the device.
        init?(source: String) {
            switch source {
            case "parse": self = .parse
            case "apns": self = .apns
            case "device", "transfer": self = .device
            case "app": self = .app
            case "media": self = .media
            case "backend": self = .backend
            default: return nil
            }
        }

        var perDevice: Bool { self == .device || self == .app }
    }

    /// One lifeline drawn: a lane, and for a device's or an app's, which device (nil for a run's only one).
    struct Column: Equatable {
        var lane: Lane
        var device: String?

        var title: String { device.map { "\(lane.title) \($0)" } ?? lane.title }
    }

    enum Row {
        case message(from: Lane, to: Lane, label: String)
        case note(Lane, String)
        case step(String)
    }

    struct Entry {
        var row: Row
        var event: TimelineEvent
        var failure: Bool
    }

    var entries: [Entry]
    var marks: HTMLReport.Marks
    var missingLinks: [(number: Int, pattern: String)]
    /// The lifelines, left to right: Parse, APNs, each device with its app, the media server, and the
    /// backends when they are on the timeline.
    var columns: [Column]

    init(events: [TimelineEvent], marks: HTMLReport.Marks, verdict: ChainVerdict?) {
        self.marks = marks
        entries = events.compactMap { event in
            guard let row = Self.row(for: event) else { return nil }
            return Entry(
                row: row, event: event, failure: Self.isFailure(event) || marks.violations.contains(event.sequence))
        }
        missingLinks = (verdict?.links ?? []).enumerated().compactMap { index, link in
            link.event == nil ? (index + 1, link.pattern.description) : nil
        }
        var devices: [String?] = []
        for event in events {
            if let name = event["device"], !devices.contains(name) { devices.append(name) }
        }
        if devices.isEmpty { devices = [nil] }
        columns =
            [Column(lane: .parse), Column(lane: .apns)]
            + devices.flatMap { [Column(lane: .device, device: $0), Column(lane: .app, device: $0)] }
            + [Column(lane: .media)]
            + (events.contains { $0.source == "backend" } ? [Column(lane: .backend)] : [])
    }

    /// Where `lane`'s lifeline is for an event of `device`: a device's or an app's lane is that device's;
    /// for an event that names no device, the run's only device, or none when there are several.
    func x(_ lane: Lane, device: String?) -> Double? {
        let index = columns.firstIndex { column in
            guard column.lane == lane else { return false }
            guard lane.perDevice else { return true }
            return device.map { column.device == $0 } ?? (columns.filter { $0.lane == lane }.count == 1)
        }
        return index.map { Self.timeColumn + Self.badgeColumn + Self.laneWidth * (Double($0) + 0.5) }
    }

    /// How an event is drawn, or nil for the ones only the table lists (progress, logs, output).
    static func row(for event: TimelineEvent) -> Row? {
        let a = event.attributes
        switch event.kind {
        case .stepStarted: return .step(a["step"] ?? "step")
        case .parseInstallationSaved: return .message(from: .app, to: .parse, label: "save installation")
        case .parsePushAccepted: return .note(.parse, "push accepted: \(a["recipients"] ?? "?") recipients")
        case .parsePushSent, .appConnected, .appLog, .appOutput, .transferProgress, .notificationScheduled: return nil
        case .parsePushStatus:
            return .note(
                .parse, "status \(a["status"] ?? ""): \(a["numSent"] ?? "0") sent, \(a["numFailed"] ?? "0") failed")
        case .apnsDeviceRegistered: return .message(from: .device, to: .apns, label: "register device")
        case .apnsAccepted:
            return .message(
                from: .parse, to: .apns, label: "POST /3/device 200 \(a["pushType"] ?? "") p\(a["priority"] ?? "")")
        case .apnsRejected:
            return .message(from: .parse, to: .apns, label: "POST /3/device \(a["status"] ?? "") \(a["reason"] ?? "")")
        case .apnsDelivered: return .message(from: .apns, to: .device, label: "push")
        case .apnsStored: return .note(.apns, "stored: device offline")
        case .appRegisteredForPush: return .message(from: .device, to: .app, label: "device token")
        case .pushReceived: return .note(.device, "push: \(a["decision"] ?? "received")")
        case .pushDelivered:
            return .message(from: .device, to: .app, label: "remote notification (\(a["wake"] ?? "running"))")
        case .appLaunched: return .message(from: .device, to: .app, label: "launch (\(a["reason"] ?? "user"))")
        case .appStateChanged: return .note(.app, a["state"] ?? "state")
        case .appExited: return .note(.app, "exited: \(a["cause"] ?? "")")
        case .watchdogKilled: return .message(from: .device, to: .app, label: "watchdog kill")
        case .sessionEvent: return .message(from: .device, to: .app, label: a["event"] ?? "session event")
        case .sessionHandleEvents:
            return .message(from: .device, to: .app, label: "handleEventsForBackgroundURLSession")
        case .sessionDidFinishEvents: return .message(from: .device, to: .app, label: "urlSessionDidFinishEvents")
        case .appLocalNotification:
            return .message(from: .app, to: .device, label: "local notification \"\(a["alertBody"] ?? "")\"")
        case .appFetchCompleted:
            return .message(from: .app, to: .device, label: "fetch completion (\(a["result"] ?? ""))")
        case .appSessionEventsCompleted: return .message(from: .app, to: .device, label: "events completion handler")
        case .notificationShown: return .note(.device, "shown: \(a["body"] ?? "")")
        case .mediaRequest:
            let range = (a["range"] ?? "").isEmpty ? "" : " \(a["range"] ?? "")"
            return .message(
                from: .device, to: .media,
                label: "\(a["method"] ?? "GET") \(a["path"] ?? "")\(range) → \(a["status"] ?? "")")
        case .mediaResponseFinished:
            return .message(from: .media, to: .device, label: "\(a["bytes"] ?? "?") bytes sent")
        case .transferStarted: return .note(.device, "task \(a["task"] ?? "") started")
        case .transferCompleted: return .note(.device, "task \(a["task"] ?? "") done, \(a["bytes"] ?? "?") bytes")
        case .appUI: return .note(.app, "screen \(a["screen"] ?? "")")
        default:
            guard let lane = Lane(source: event.source) else { return nil }
            let detail = ["reason", "why", "error", "next", "event"].compactMap { a[$0] }.first.map { ": \($0)" } ?? ""
            return .note(lane, event.kind.rawValue + detail)
        }
    }

    static func isFailure(_ event: TimelineEvent) -> Bool {
        [
            .apnsRejected, .parsePushFailed, .watchdogKilled, .transferFailed, .transferFileLost,
            .sessionHandlerNotCalled,
            .mediaFaultFired, .transferInterrupted,
        ]
        .contains(event.kind)
    }

    // Layout, in SVG units.
    static let timeColumn = 64.0
    static let badgeColumn = 26.0
    static let laneWidth = 200.0
    static let top = 44.0
    static let rowHeight = 24.0
    static let maximumLabel = 46

    func svg() -> String {
        let width = Self.timeColumn + Self.badgeColumn + Self.laneWidth * Double(columns.count)
        let rows = entries.count + missingLinks.count
        let height = Self.top + Self.rowHeight * Double(rows) + 20
        var out = """
            <svg class="sequence" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(HTMLReport.number(width)) \(HTMLReport.number(height))" width="\(HTMLReport.number(width))" data-messages="\(entries.filter { if case .message = $0.row { true } else { false } }.count)">
            <defs>
            <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#444"/></marker>
            <marker id="arrow-failure" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#c62828"/></marker>
            </defs>

            """
        for (index, column) in columns.enumerated() {
            let x = HTMLReport.number(Self.timeColumn + Self.badgeColumn + Self.laneWidth * (Double(index) + 0.5))
            out += "<text class=\"lane-name\" x=\"\(x)\" y=\"20\">\(HTMLReport.escape(column.title))</text>"
            out += "<line class=\"lane\" x1=\"\(x)\" y1=\"28\" x2=\"\(x)\" y2=\"\(HTMLReport.number(height - 8))\"/>\n"
        }
        for (index, entry) in entries.enumerated() {
            let y = Self.top + Self.rowHeight * Double(index) + Self.rowHeight / 2
            out += draw(entry, y: y, width: width)
        }
        for (index, link) in missingLinks.enumerated() {
            let y = Self.top + Self.rowHeight * Double(entries.count + index) + Self.rowHeight / 2
            out +=
                "<g class=\"missing\"><line x1=\"\(HTMLReport.number(Self.timeColumn))\" y1=\"\(HTMLReport.number(y + 6))\" x2=\"\(HTMLReport.number(width))\" y2=\"\(HTMLReport.number(y + 6))\"/>"
            out +=
                "<text x=\"\(HTMLReport.number(Self.timeColumn + Self.badgeColumn))\" y=\"\(HTMLReport.number(y + 2))\">✗ link \(link.number) never seen: \(HTMLReport.escape(link.pattern))</text></g>\n"
        }
        return out + "</svg>\n"
    }

    private func draw(_ entry: Entry, y: Double, width: Double) -> String {
        let event = entry.event
        var out =
            "<g class=\"row\" data-sequence=\"\(event.sequence)\" data-kind=\"\(HTMLReport.escape(event.kind.rawValue))\">"
        out +=
            "<text class=\"time\" x=\"4\" y=\"\(HTMLReport.number(y + 4))\">\(String(format: "%.3f", event.elapsed))</text>"
        if let number = marks.linkNumber[event.sequence] {
            let cx = HTMLReport.number(Self.timeColumn + Self.badgeColumn / 2)
            out +=
                "<g class=\"badge\"><circle cx=\"\(cx)\" cy=\"\(HTMLReport.number(y))\" r=\"9\"/><text x=\"\(cx)\" y=\"\(HTMLReport.number(y + 4))\">\(number)</text></g>"
        }
        let failure = entry.failure ? " failure" : ""
        let device = event["device"]
        var row = entry.row
        // A message between a device and a service that names no device, in a run of several: the
        // service's side of it, as a note.
        if case .message(let from, let to, let label) = row,
            x(from, device: device) == nil || x(to, device: device) == nil
        {
            row = .note(x(from, device: device) == nil ? to : from, label)
        }
        switch row {
        case .step(let text):
            out +=
                "<g class=\"step\"><line x1=\"\(HTMLReport.number(Self.timeColumn))\" y1=\"\(HTMLReport.number(y + 8))\" x2=\"\(HTMLReport.number(width))\" y2=\"\(HTMLReport.number(y + 8))\"/>"
            out +=
                "<text x=\"\(HTMLReport.number(Self.timeColumn + Self.badgeColumn))\" y=\"\(HTMLReport.number(y + 4))\">▶ \(HTMLReport.escape(Self.shorten(text, to: 110)))</text></g>"
        case .message(let from, let to, let label):
            let x1 = x(from, device: device) ?? 0
            let x2 = x(to, device: device) ?? 0
            let marker = entry.failure ? "arrow-failure" : "arrow"
            out +=
                "<g class=\"message\(failure)\"><line x1=\"\(HTMLReport.number(x1))\" y1=\"\(HTMLReport.number(y + 6))\" x2=\"\(HTMLReport.number(x2))\" y2=\"\(HTMLReport.number(y + 6))\" marker-end=\"url(#\(marker))\"/>"
            out +=
                "<text x=\"\(HTMLReport.number((x1 + x2) / 2))\" y=\"\(HTMLReport.number(y + 1))\">\(HTMLReport.escape(Self.shorten(label)))</text></g>"
        case .note(let lane, let label):
            let text = Self.shorten(label)
            let boxWidth = min(Self.laneWidth * 1.6, Double(text.count) * 6.7 + 12)
            // A device's note that names no device, in a run of several: on the first device's lane.
            let x = x(lane, device: device) ?? x(lane, device: columns.first { $0.lane == lane }?.device) ?? 0
            out +=
                "<g class=\"note\(failure)\"><rect x=\"\(HTMLReport.number(x - boxWidth / 2))\" y=\"\(HTMLReport.number(y - 9))\" width=\"\(HTMLReport.number(boxWidth))\" height=\"18\" rx=\"3\"/>"
            out +=
                "<text x=\"\(HTMLReport.number(x))\" y=\"\(HTMLReport.number(y + 4))\">\(HTMLReport.escape(text))</text></g>"
        }
        return out + "</g>\n"
    }

    static func shorten(_ text: String, to limit: Int = maximumLabel) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
