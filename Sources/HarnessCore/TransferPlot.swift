import Foundation
import HarnessTimeline

/// Bytes received over time by each transfer task, against the media server's configured rate: a
/// dashed line from the moment the task's first request reached the server, rising at the configured
/// bytes per second. A task that keeps to the line is throttled as configured; one that falls back to
/// zero restarted; a flat stretch is a stall or a wait for the network.
struct TransferPlot {
    struct Series {
        var task: String
        var points: [(seconds: Double, bytes: Double)]
        /// When the task's first request reached the media server: where the configured rate starts.
        var firstRequest: Double?
    }

    var series: [Series]
    /// The media server's throttle in bytes per second, if it had one.
    var rate: Double?

    init(events: [TimelineEvent]) {
        var byTask: [String: Series] = [:]
        var order: [String] = []
        rate = events.first { $0.kind == .serviceStarted && $0["service"] == "media" }.flatMap {
            Self.bytesPerSecond($0["throttle"])
        }
        var waitingForRequest: [String] = []
        for event in events {
            switch event.kind {
            case .transferStarted, .transferProgress, .transferCompleted:
                let key = "\(event["session"] ?? "")#\(event["task"] ?? "")"
                if byTask[key] == nil {
                    order.append(key)
                    let name =
                        event["session"].map { "\($0) task \(event["task"] ?? "")" } ?? "task \(event["task"] ?? "")"
                    byTask[key] = Series(task: name, points: [])
                    waitingForRequest.append(key)
                }
                let bytes = event.kind == .transferStarted ? 0 : Double(event["bytes"] ?? "") ?? 0
                // Only what can be drawn: a number such as "inf" in an event would break the picture.
                guard bytes.isFinite, bytes >= 0 else { continue }
                byTask[key]?.points.append((event.elapsed, bytes))
            case .mediaRequest:
                // Requests arrive in the order the tasks sent them.
                if !waitingForRequest.isEmpty { byTask[waitingForRequest.removeFirst()]?.firstRequest = event.elapsed }
            default:
                break
            }
        }
        series = order.compactMap { byTask[$0] }.filter { $0.points.count > 1 }
    }

    /// "100000 B/s", as `harness.service.started` says it.
    static func bytesPerSecond(_ text: String?) -> Double? {
        guard let text, text.hasSuffix(" B/s"), let rate = Double(text.dropLast(4)), rate.isFinite, rate > 0 else {
            return nil
        }
        return rate
    }

    static let colours = ["#1565c0", "#6a1b9a", "#00838f", "#ef6c00", "#2e7d32", "#ad1457"]

    func svg() -> String {
        // The legend, a line per task and one for the rate, goes under the time axis.
        let bottom = 40.0 + 16 * Double(series.count + 1)
        let width = 900.0, height = 240.0 + bottom
        let left = 80.0, right = 20.0, top = 20.0
        let start = series.flatMap { $0.points.map(\.seconds) }.min() ?? 0
        let end = max(series.flatMap { $0.points.map(\.seconds) }.max() ?? 1, start + 0.001)
        let maximumBytes = max(series.flatMap { $0.points.map(\.bytes) }.max() ?? 1, 1)
        func x(_ seconds: Double) -> Double { left + (seconds - start) / (end - start) * (width - left - right) }
        func y(_ bytes: Double) -> Double { height - bottom - bytes / maximumBytes * (height - top - bottom) }
        let n = HTMLReport.number
        var out =
            "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"\(n(width))\" data-series=\"\(series.count)\">\n"
        for tick in 0...4 {
            let bytes = maximumBytes * Double(tick) / 4
            let seconds = start + (end - start) * Double(tick) / 4
            out +=
                "<line class=\"grid\" x1=\"\(n(left))\" y1=\"\(n(y(bytes)))\" x2=\"\(n(width - right))\" y2=\"\(n(y(bytes)))\"/>"
            out += "<text x=\"\(n(left - 6))\" y=\"\(n(y(bytes) + 4))\" text-anchor=\"end\">\(Self.size(bytes))</text>"
            out +=
                "<text x=\"\(n(x(seconds)))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\">\(String(format: "%.1f s", seconds))</text>\n"
        }
        out +=
            "<g class=\"axis\"><line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(height - bottom))\"/>"
        out +=
            "<line x1=\"\(n(left))\" y1=\"\(n(height - bottom))\" x2=\"\(n(width - right))\" y2=\"\(n(height - bottom))\"/></g>\n"
        var legend: [String] = []
        for (index, series) in series.enumerated() {
            let colour = Self.colours[index % Self.colours.count]
            let points = series.points.map { "\(n(x($0.seconds))),\(n(y($0.bytes)))" }.joined(separator: " ")
            out += "<polyline class=\"series\" stroke=\"\(colour)\" points=\"\(points)\"/>\n"
            var text = "\(series.task): \(Self.size(series.points.last?.bytes ?? 0))"
            if let from = series.firstRequest, let last = series.points.last, last.seconds > from {
                text += String(
                    format: " in %.2f s, %@/s", last.seconds - from, Self.size(last.bytes / (last.seconds - from)))
                if let rate {
                    // The configured rate, from the first request until it would have delivered the most bytes seen.
                    let reach = min(end, from + maximumBytes / rate)
                    out +=
                        "<line class=\"rate\" x1=\"\(n(x(from)))\" y1=\"\(n(y(0)))\" x2=\"\(n(x(reach)))\" y2=\"\(n(y((reach - from) * rate)))\"/>\n"
                }
            }
            legend.append("<tspan fill=\"\(colour)\">■</tspan> \(HTMLReport.escape(text))")
        }
        legend.append(
            rate.map { "<tspan class=\"rate-legend\" fill=\"#c62828\">- -</tspan> configured rate \(Self.size($0))/s" }
                ?? "no throttle configured")
        for (index, line) in legend.enumerated() {
            out += "<text x=\"\(n(left))\" y=\"\(n(height - bottom + 40 + Double(index) * 16))\">\(line)</text>\n"
        }
        return out + "</svg>\n"
    }

    static func size(_ bytes: Double) -> String {
        if bytes >= 1_000_000 { return String(format: "%.1f MB", bytes / 1_000_000) }
        if bytes >= 1_000 { return String(format: "%.0f KB", bytes / 1_000) }
        return String(format: "%.0f B", bytes)
    }
}
