import Foundation

/// A batch's `summary.json`: what ran, what it came to, and what it was made from (the commit and
/// harness.yml's digest), so that the reports of a sharded run can be joined (``ReportMerge``).
struct BatchSummary: Codable {
    var scenarios: Int
    var passed: Int
    var failed: [String]
    /// Matrix cells that failed where their scenario says they do.
    var expectedFailures: [String]
    /// Scenarios an interruption kept from starting.
    var skipped: [String]
    var seconds: Double
    var parallel: Int
    /// The commit of the project the run was made in; nil outside a git checkout.
    var commit: String?
    var harnessYmlSha256: String?
    var results: [RunReport.Summary]

    init(results: [RunResult], seconds: Double, parallel: Int, commit: String?, harnessYmlSha256: String?) {
        self.init(
            summaries: results.map { RunReport.Summary($0) }, seconds: seconds, parallel: parallel, commit: commit,
            harnessYmlSha256: harnessYmlSha256)
    }

    init(summaries: [RunReport.Summary], seconds: Double, parallel: Int, commit: String?, harnessYmlSha256: String?) {
        scenarios = summaries.count
        passed = summaries.filter { $0.outcome == "PASS" }.count
        failed = summaries.filter { !["PASS", "XFAIL", "SKIPPED"].contains($0.outcome) }.map(\.scenario)
        expectedFailures = summaries.filter { $0.outcome == "XFAIL" }.map(\.scenario)
        skipped = summaries.filter { $0.outcome == "SKIPPED" }.map(\.scenario)
        self.seconds = seconds
        self.parallel = parallel
        self.commit = commit
        self.harnessYmlSha256 = harnessYmlSha256
        results = summaries
    }

    /// `junit.xml`, `summary.json` and `index.html` in `folder`.
    static func write(
        _ summary: BatchSummary, results: [RunResult], into folder: URL, seconds: Double, parallel: Int
    ) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try RunReport.junit(results, time: seconds).write(
            to: folder.appendingPathComponent("junit.xml"), atomically: true, encoding: .utf8)
        try encoder.encode(summary).write(to: folder.appendingPathComponent("summary.json"))
        try HTMLReport.batchIndex(results, seconds: seconds, parallel: parallel, folder: folder).write(
            to: folder.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
    }
}

extension RunResult {
    /// A result as a batch's `summary.json` keeps it, for the reports of a merge: its outcome, time,
    /// explanation, cell and cassette (no verdict: the scenario's own report folder has it).
    init(_ summary: RunReport.Summary, reportDirectory: URL, cassette: URL?) {
        let message = summary.message ?? ""
        let outcome: RunOutcome =
            switch summary.outcome {
            case "PASS": .passed
            case "FAIL": .failed(message)
            case "XFAIL": .expectedFailure(message)
            case "INTERRUPTED": .interrupted
            case "SKIPPED": .skipped
            default: .setupError(message)
            }
        let seconds = summary.seconds.isFinite ? min(max(summary.seconds, 0), 1e9) : 0
        self.init(
            scenario: summary.scenario, outcome: outcome, verdict: nil, reportDirectory: reportDirectory,
            duration: .milliseconds(Int64(seconds * 1000)), explanation: summary.explanation ?? "")
        cell = summary.cell.map { MatrixCell(scenario: $0.scenario, profile: $0.profile) }
        self.cassette = cassette
    }
}
