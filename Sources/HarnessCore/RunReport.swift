import Foundation
import HarnessTimeline

/// Writes a run's files: `timeline.jsonl` (every event, one JSON object a line), `junit.xml` (one test
/// case per scenario, the failure explained), the contract with every CI, `report.json` (the
/// outcome and the chain, link by link) and `report.html` (the same for people, with a sequence
/// diagram and the transfers' bytes over time).
enum RunReport {
    static func write(_ result: RunResult, events: [TimelineEvent]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try timelineLines(events).write(to: result.reportDirectory.appendingPathComponent("timeline.jsonl"))
        try junit([result], time: result.seconds).write(
            to: result.reportDirectory.appendingPathComponent("junit.xml"), atomically: true, encoding: .utf8)
        try encoder.encode(Summary(result, devices: DeviceSummary.of(events))).write(
            to: result.reportDirectory.appendingPathComponent("report.json"))
        try HTMLReport.render(result, events: events).write(
            to: result.reportDirectory.appendingPathComponent("report.html"), atomically: true, encoding: .utf8)
    }

    /// The events as `timeline.jsonl` holds them, one JSON object a line: the report's and a cassette's.
    static func timelineLines(_ events: [TimelineEvent]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var lines = Data()
        for event in events {
            lines.append(try encoder.encode(event))
            lines.append(UInt8(ascii: "\n"))
        }
        return lines
    }

    /// One test case per scenario; `time` is the wall time of the whole batch.
    /// - Parameter workingDirectory: a kept cassette is named from here when it is inside it (CI tools
    ///   resolve an attachment from the workspace), else by its absolute path.
    static func junit(
        _ results: [RunResult], time: Double,
        workingDirectory: String = FileManager.default.currentDirectoryPath
    ) -> String {
        let failures = results.filter { if case .failed = $0.outcome { true } else { false } }.count
        let errors = results.filter {
            if case .interrupted = $0.outcome { true } else if case .setupError = $0.outcome { true } else { false }
        }.count
        let skipped = results.filter {
            if case .expectedFailure = $0.outcome { true } else { $0.outcome == .skipped }
        }.count
        let cases = results.map { result -> String in
            var body = ""
            switch result.outcome {
            case .passed:
                break
            case .failed(let message):
                body = "      <failure message=\"\(escape(message))\">\(escape(result.explanation))</failure>\n"
            case .interrupted:
                body = "      <error message=\"interrupted\">the run was interrupted before it finished</error>\n"
            case .skipped:
                body = "      <skipped message=\"the batch was interrupted before this scenario started\"/>\n"
            case .expectedFailure(let message):
                body = "      <skipped message=\"\(escape(message))\"/>\n"
            case .setupError(let message):
                body = "      <error message=\"\(escape(message))\">\(escape(result.explanation))</error>\n"
            }
            // Jenkins's and GitLab's convention for a file that goes with a test case: a file, so the
            // cassette's meta.json (the cassette is its folder).
            if let cassette = result.cassette, result.outcome.exitCode != 0 {
                let path = Self.path(of: cassette.appendingPathComponent("meta.json"), from: workingDirectory)
                body += "      <system-out>[[ATTACHMENT|\(escape(path))]]</system-out>\n"
            }
            return """
                    <testcase classname="harness.scenarios" name="\(escape(result.scenario))" time="\(String(format: "%.3f", result.seconds))">
                \(body)    </testcase>

                """
        }.joined()
        let totals =
            "tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\" time=\"\(String(format: "%.3f", time))\""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="harness" \(totals)>
              <testsuite name="harness" \(totals)>
            \(cases)  </testsuite>
            </testsuites>

            """
    }

    /// `report.json`: the run's outcome and its chain, for tools.
    struct Summary: Codable {
        struct Link: Codable {
            var expected: String
            var seen: Bool
            var atSeconds: Double?
            /// Not seen in its place but before the link it follows, at this time.
            var tooEarlyAtSeconds: Double?
        }

        /// A replay's comparison with its recording.
        struct Replay: Codable, Equatable {
            /// The recording's outcome and the replay's own scenario verdict.
            var recordedOutcome: String
            var scenarioOutcome: String
            var equivalent: Bool
            /// The first divergence: its kind (`missing`, `unexpected`, `different`, `timing`, `order`)
            /// and its summary.
            var divergence: String?
            var divergenceKind: String?
        }

        struct Cell: Codable, Equatable {
            var scenario: String
            var profile: String
        }

        var scenario: String
        var outcome: String
        var message: String?
        var seconds: Double
        var chain: [Link]
        var violations: [String]
        var explanation: String?
        /// Each named device's pushes, notifications and app exits; absent for a run of one unnamed device.
        var devices: [DeviceSummary]?
        /// A matrix cell's scenario and profile.
        var cell: Cell?
        /// The kept cassette, as the JUnit report names it (from the folder the run started in).
        var cassette: String?
        /// A replay's comparison; absent for a run that is no replay.
        var replay: Replay?

        init(_ result: RunResult, devices: [DeviceSummary] = []) {
            self.devices = devices.isEmpty ? nil : devices
            cell = result.cell.map { Cell(scenario: $0.scenario, profile: $0.profile) }
            cassette = result.cassette.map { RunReport.path(of: $0, from: FileManager.default.currentDirectoryPath) }
            scenario = result.scenario
            outcome = result.outcome.label
            switch result.outcome {
            case .failed(let text), .setupError(let text), .expectedFailure(let text): message = text
            case .passed, .interrupted: message = nil
            case .skipped: message = "the batch was interrupted before this scenario started"
            }
            seconds = result.seconds
            chain = (result.verdict?.links ?? []).map {
                Link(
                    expected: $0.pattern.description, seen: $0.event != nil, atSeconds: $0.event?.elapsed,
                    tooEarlyAtSeconds: $0.event == nil ? $0.early?.elapsed : nil)
            }
            replay = result.replayedVerdict.map {
                Replay(
                    recordedOutcome: $0.recorded, scenarioOutcome: $0.now, equivalent: result.divergence == nil,
                    divergence: result.divergence?.summary, divergenceKind: result.divergence?.kind.rawValue)
            }
            violations = (result.verdict?.violations ?? []).map { "\($0.1.kind) (never: \($0.0))" }
            explanation = result.explanation.isEmpty ? nil : result.explanation
        }
    }

    /// `url` relative to `folder` when it is inside it, else its absolute path.
    static func path(of url: URL, from folder: String) -> String {
        let path = url.standardizedFileURL.path
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        let prefix = base.hasSuffix("/") ? base : base + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    /// A relative link from `folder` to `url`, each segment percent-encoded (`../cassettes/a%5B3G%5D`).
    static func href(to url: URL, from folder: URL) -> String {
        let target = url.standardizedFileURL.pathComponents
        let start = folder.standardizedFileURL.pathComponents
        let shared = zip(target, start).prefix { $0 == $1 }.count
        let segments = Array(repeating: "..", count: start.count - shared) + target.dropFirst(shared)
        return segments.map {
            $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "?", "#", "[", "]"]))
                ?? $0
        }.joined(separator: "/")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
