import Foundation
import HarnessTimeline

/// Writes a run's files: `timeline.jsonl` (every event, one JSON object a line) and `junit.xml`
/// (one test case per scenario, the failure explained), the contract with every CI.
enum RunReport {
    static func write(_ result: RunResult, events: [TimelineEvent], explanation: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var lines = Data()
        for event in events {
            lines.append(try encoder.encode(event))
            lines.append(UInt8(ascii: "\n"))
        }
        try lines.write(to: result.reportDirectory.appendingPathComponent("timeline.jsonl"))
        try junit(result, explanation: explanation).write(
            to: result.reportDirectory.appendingPathComponent("junit.xml"), atomically: true, encoding: .utf8)
    }

    static func junit(_ result: RunResult, explanation: String) -> String {
        let seconds = String(format: "%.3f", Double(result.duration.components.seconds) + Double(result.duration.components.attoseconds) / 1e18)
        let name = escape(result.scenario)
        var body = ""
        var failures = 0
        var errors = 0
        switch result.outcome {
        case .passed:
            break
        case .failed(let message):
            failures = 1
            body = "      <failure message=\"\(escape(message))\">\(escape(explanation))</failure>\n"
        case .interrupted:
            errors = 1
            body = "      <error message=\"interrupted\">the run was interrupted before it finished</error>\n"
        case .setupError(let message):
            errors = 1
            body = "      <error message=\"\(escape(message))\">\(escape(explanation))</error>\n"
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="harness" tests="1" failures="\(failures)" errors="\(errors)" time="\(seconds)">
              <testsuite name="harness" tests="1" failures="\(failures)" errors="\(errors)" time="\(seconds)">
                <testcase classname="harness.scenarios" name="\(name)" time="\(seconds)">
            \(body)    </testcase>
              </testsuite>
            </testsuites>

            """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
