import Foundation
import HarnessTimeline

/// `report.html`: one self-contained page (no file or network fetched) for people debugging a run: the
/// verdict and its explanation, the chain link by link, a sequence diagram of who told whom what across
/// Parse, APNs, the device, the app and the media server, a plot of the bytes each transfer received
/// against the media server's configured rate, and every event in a table filtered by component.
///
/// The pictures are SVG drawn here, so the page shows the same thing in any browser and tests can read
/// the numbers back; the page's only script filters the table.
enum HTMLReport {
    static func render(_ result: RunResult, events: [TimelineEvent]) -> String {
        let marks = Marks(result.verdict)
        var body = header(result)
        body += chainSection(result.verdict)
        body += replaySection(result)
        body += "<h2>Sequence</h2>\n" + SequenceDiagram(events: events, marks: marks, verdict: result.verdict).svg()
        body += devicesSection(DeviceSummary.of(events))
        let plot = TransferPlot(events: events)
        if !plot.series.isEmpty { body += "<h2>Bytes received</h2>\n" + plot.svg() }
        body += eventTable(events, marks: marks)
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(result.outcome.label)) \(escape(result.scenario)) · harness report</title>
            <style>\(style)</style>
            </head>
            <body>
            \(body)
            <script>\(script)</script>
            </body>
            </html>

            """
    }

    /// A table of the run's named devices: what each received, showed and how its apps ended.
    static func devicesSection(_ devices: [DeviceSummary]) -> String {
        guard !devices.isEmpty else { return "" }
        let rows = devices.map { device in
            "<tr><td>\(escape(device.name))</td><td>\(device.pushesReceived)</td><td>"
                + device.notificationsShown.map(escape).joined(separator: "<br>")
                + "</td><td>\(escape(device.appExits.joined(separator: ", ")))</td></tr>\n"
        }.joined()
        return "<h2>Devices</h2>\n<table class=\"devices\"><tr><th>device</th><th>pushes received</th>"
            + "<th>notifications shown</th><th>app exits</th></tr>\n\(rows)</table>\n"
    }

    /// A batch's `index.html`: a line per scenario with its outcome, time and verdict, linking to the
    /// scenario's own report.
    static func batchIndex(_ results: [RunResult], seconds: Double, parallel: Int, folder: URL) -> String {
        let passed = results.filter { $0.outcome == .passed }.count
        let expected = results.filter { if case .expectedFailure = $0.outcome { true } else { false } }.count
        let rows = results.map { result in
            let label = result.outcome.label
            let message: String
            switch result.outcome {
            case .failed(let text), .setupError(let text), .expectedFailure(let text): message = text
            case .passed, .interrupted: message = ""
            case .skipped: message = "the batch was interrupted before this scenario started"
            }
            let name = escape(result.scenario)
            // A skipped scenario never ran, so it has no report to link to.
            let cell =
                result.outcome == .skipped ? name : "<a href=\"\(link(result.scenario))/report.html\">\(name)</a>"
            // A kept cassette, to download and replay.
            let cassette = result.cassette.map {
                " <a class=\"cassette\" href=\"\(escape(RunReport.href(to: $0, from: folder)))\">cassette</a>"
            }
            return "<tr class=\"\(label == "PASS" ? "seen" : "missing")\"><td>\(label)</td>"
                + "<td>\(cell)</td><td>\(String(format: "%.1f s", result.seconds))</td>"
                + "<td>\(escape(message))\(cassette ?? "")</td></tr>"
        }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <title>\(passed) of \(results.count) passed · harness batch</title>
            <style>\(style)</style>
            </head>
            <body>
            <header class="\(passed + expected == results.count ? "pass" : "fail")">
            <h1><span class="outcome">\(passed) of \(results.count)</span> scenarios passed</h1>
            <p>\(expected > 0 ? "\(expected) failed as expected, " : "")\(String(format: "%.1f", seconds)) s, \(parallel) at a time</p>
            </header>
            \(matrix(results, folder: folder))
            <table class="chain batch">
            <thead><tr><th>outcome</th><th>scenario</th><th>time</th><th>verdict</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            </body>
            </html>

            """
    }

    /// The network matrix, when the batch ran one: scenarios down, profiles across, each cell its
    /// outcome linking its report, and its kept cassette. Empty otherwise.
    static func matrix(_ results: [RunResult], folder: URL) -> String {
        var scenarios: [String] = []
        var profiles: [String] = []
        var cells: [String: RunResult] = [:]
        for result in results {
            guard let cell = result.cell else { continue }
            if !scenarios.contains(cell.scenario) { scenarios.append(cell.scenario) }
            if !profiles.contains(cell.profile) { profiles.append(cell.profile) }
            cells[cell.scenario + "\u{0}" + cell.profile] = result
        }
        guard !scenarios.isEmpty else { return "" }
        let head = "<tr><th>scenario</th>" + profiles.map { "<th>\(escape($0))</th>" }.joined() + "</tr>"
        let rows = scenarios.map { scenario in
            "<tr><td>\(escape(scenario))</td>"
                + profiles.map { profile in
                    guard let result = cells[scenario + "\u{0}" + profile] else { return "<td></td>" }
                    let label = result.outcome.label
                    let mark = label == "PASS" ? "pass" : label == "XFAIL" ? "xfail" : "fail"
                    let text =
                        result.outcome == .skipped
                        ? label
                        : "<a href=\"\(link(result.scenario))/report.html\">\(escape(label))</a>"
                            + (result.cassette.map {
                                " <a class=\"cassette\" href=\"\(escape(RunReport.href(to: $0, from: folder)))\">cassette</a>"
                            } ?? "")
                    return
                        "<td class=\"\(mark)\" title=\"\(escape(result.outcome.failureMessage ?? label))\">\(text)</td>"
                }.joined() + "</tr>"
        }.joined(separator: "\n")
        return """
            <h2>Network matrix</h2>
            <table class="chain matrix">
            <thead>\(head)</thead>
            <tbody>
            \(rows)
            </tbody>
            </table>
            """
    }

    /// Which events the verdict points at: the chain's links (numbered) and the forbidden ones.
    struct Marks {
        var linkNumber: [Int: Int] = [:]
        var violations: Set<Int> = []

        init(_ verdict: ChainVerdict?) {
            for (index, link) in (verdict?.links ?? []).enumerated() {
                if let event = link.event { linkNumber[event.sequence] = index + 1 }
            }
            violations = Set((verdict?.violations ?? []).map(\.1.sequence))
        }
    }

    private static func header(_ result: RunResult) -> String {
        let outcome = result.outcome.label
        var text = """
            <header class="\(outcome == "PASS" ? "pass" : "fail")">
            <h1><span class="outcome">\(escape(outcome))</span> \(escape(result.scenario))</h1>
            <p>\(String(format: "%.1f", result.seconds)) s · report folder <code>\(escape(result.reportDirectory.path))</code></p>
            </header>

            """
        if !result.explanation.isEmpty {
            text += "<pre class=\"explanation\">\(escape(result.explanation))</pre>\n"
        } else if case .setupError(let message) = result.outcome {
            text += "<pre class=\"explanation\">\(escape(message))</pre>\n"
        }
        return text
    }

    private static func chainSection(_ verdict: ChainVerdict?) -> String {
        guard let verdict, !verdict.links.isEmpty else { return "" }
        let rows = verdict.links.enumerated().map { index, link in
            let seen = link.event.map { String(format: "%.3f s", $0.elapsed) } ?? "not seen"
            return
                "<tr class=\"\(link.event == nil ? "missing" : "seen")\"><td>\(index + 1)</td><td>\(link.event == nil ? "✗" : "✓")</td>"
                + "<td><code>\(escape(link.pattern.description))</code></td><td>\(seen)</td></tr>"
        }.joined(separator: "\n")
        return """
            <h2>Chain</h2>
            <table class="chain">
            <thead><tr><th>#</th><th></th><th>expected</th><th>seen at</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>

            """
    }

    private static func eventTable(_ events: [TimelineEvent], marks: Marks) -> String {
        let sources = Array(Set(events.map(\.source))).sorted()
        let filters = sources.map { source in
            "<label><input type=\"checkbox\" data-source=\"\(escape(source))\" checked> \(escape(source))</label>"
        }.joined(separator: " ")
        let rows = events.map { event in
            var classes = ["source-\(className(event.source))"]
            if marks.linkNumber[event.sequence] != nil { classes.append("link") }
            if marks.violations.contains(event.sequence) { classes.append("violation") }
            let attributes = event.attributes.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: " ")
            return
                "<tr id=\"event-\(event.sequence)\" class=\"\(classes.joined(separator: " "))\" data-source=\"\(escape(event.source))\">"
                + "<td>\(event.sequence)</td><td>\(String(format: "%.3f", event.elapsed))</td>"
                + "<td>\(escape(event.kind.rawValue))</td><td class=\"attributes\">\(attributes)</td></tr>"
        }.joined(separator: "\n")
        return """
            <h2>Events</h2>
            <p class="filters">\(filters) <span id="shown-count">\(events.count)</span> of \(events.count) shown</p>
            <table class="events">
            <thead><tr><th>#</th><th>seconds</th><th>kind</th><th>attributes</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>

            """
    }

    /// For a replay: whether it matched the recording, and where it left it, the recording's events
    /// beside this run's.
    static func replaySection(_ result: RunResult) -> String {
        guard let verdicts = result.replayedVerdict else { return "" }
        guard let divergence = result.divergence else {
            return "<h2>Replay</h2>\n<p class=\"replay equivalent\">Equivalent to the recording: the scenario ended "
                + "\(escape(verdicts.now)), as recorded.</p>\n"
        }
        func cells(_ events: [TimelineEvent], marked: TimelineEvent?) -> [String] {
            events.map { event in
                let attributes = event.attributes.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: " ")
                let mark = event == marked ? " class=\"diverged\"" : ""
                return "<td\(mark)><b>\(escape(event.kind.rawValue))</b> \(attributes)</td>"
            }
        }
        let left = cells(divergence.expectedAround, marked: divergence.expected)
        let right = cells(divergence.actualAround, marked: divergence.actual)
        let rows = (0..<max(left.count, right.count)).map { (row: Int) -> String in
            let mine: String = row < left.count ? left[row] : "<td></td>"
            let theirs: String = row < right.count ? right[row] : "<td></td>"
            return "<tr>\(mine)\(theirs)</tr>"
        }.joined(separator: "\n")
        return """
            <h2>Replay</h2>
            <p class="replay diverged">\(escape(divergence.summary))</p>
            <table class="replay side-by-side">
            <thead><tr><th>recorded (ended \(escape(verdicts.recorded)))</th><th>this run (ended \(escape(verdicts.now)))</th></tr></thead>
            <tbody>
            \(rows)
            </tbody>
            </table>

            """
    }

    /// Text for HTML content and quoted attributes. By Unicode scalar, not by character: a quote
    /// followed by a combining mark is one character, and must still be escaped.
    static func escape(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped.append(contentsOf: "&amp;".unicodeScalars)
            case "<": escaped.append(contentsOf: "&lt;".unicodeScalars)
            case ">": escaped.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": escaped.append(contentsOf: "&quot;".unicodeScalars)
            case "'": escaped.append(contentsOf: "&#39;".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// A path segment for a link: scenario names become folder names.
    static func link(_ segment: String) -> String {
        escape(
            segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "?", "#"]))
                ?? segment)
    }

    /// A class-name-safe form of a component's name.
    static func className(_ text: String) -> String {
        String(text.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII ? Character($0) : "-" })
    }

    static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    static let style = """
        body { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1d1d1f; }
        header { border-left: 8px solid; padding: 4px 16px; margin-bottom: 16px; }
        header.pass { border-color: #2e8540; } header.fail { border-color: #c62828; }
        header.pass .outcome { color: #2e8540; } header.fail .outcome { color: #c62828; }
        h1 { margin: 0; font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
        pre.explanation { background: #fff4f4; border: 1px solid #f0c0c0; padding: 12px; white-space: pre-wrap; }
        table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; vertical-align: top; }
        table.chain tr.seen td:nth-child(2) { color: #2e8540; } table.chain tr.missing td { color: #c62828; font-weight: 600; }
        table.matrix td.pass a { color: #2e8540; } table.matrix td.xfail a { color: #8a6d00; }
        table.matrix td.fail a { color: #c62828; font-weight: 700; }
        table.events { font: 12px/1.3 ui-monospace, Menlo, monospace; } table.events tr:nth-child(even) { background: #f6f6f8; }
        table.events tr.link { font-weight: 700; } table.events tr.violation { background: #ffe0e0; }
        table.replay { font: 12px/1.3 ui-monospace, Menlo, monospace; width: 100%; } table.replay td { width: 50%; vertical-align: top; }
        table.replay td.diverged { background: #ffe0e0; }
        table.events td.attributes { word-break: break-all; }
        svg { display: block; max-width: 100%; height: auto; font: 11px ui-monospace, Menlo, monospace; }
        svg .lane { stroke: #b0b0b8; stroke-dasharray: 4 4; } svg .lane-name { font: 600 13px sans-serif; text-anchor: middle; }
        svg .message line { stroke: #444; } svg .message text { text-anchor: middle; fill: #222; }
        svg .message.failure line { stroke: #c62828; } svg .message.failure text, svg .note.failure text { fill: #c62828; }
        svg .note rect { fill: #fffbe6; stroke: #d8c98a; } svg .note text { text-anchor: middle; }
        svg .step line { stroke: #9aa7c7; } svg .step text { fill: #44507a; }
        svg .badge circle { fill: #2e8540; } svg .badge text { fill: white; text-anchor: middle; font-weight: 700; }
        svg .missing text { fill: #c62828; font-weight: 700; } svg .missing line { stroke: #c62828; stroke-dasharray: 6 3; }
        svg .time { fill: #888; }
        svg .axis line, svg .axis path { stroke: #888; } svg .grid { stroke: #eee; }
        svg .rate { stroke: #c62828; stroke-dasharray: 6 4; fill: none; } svg .series { fill: none; stroke-width: 2; }
        .filters label { margin-right: 10px; }
        """

    private static let script = """
        (function () {
          var boxes = document.querySelectorAll('.filters input[data-source]');
          var rows = document.querySelectorAll('table.events tbody tr');
          var counter = document.getElementById('shown-count');
          function apply() {
            var hidden = {};
            boxes.forEach(function (box) { if (!box.checked) { hidden[box.dataset.source] = true; } });
            var shown = 0;
            rows.forEach(function (row) {
              var visible = !hidden[row.dataset.source];
              row.style.display = visible ? '' : 'none';
              if (visible) { shown += 1; }
            });
            counter.textContent = String(shown);
          }
          boxes.forEach(function (box) { box.addEventListener('change', apply); });
          apply();
        })();
        """
}
