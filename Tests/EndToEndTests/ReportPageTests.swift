import Foundation
import TestSupport
import Testing

/// The run's `report.html` opened in headless Chromium (Tests/Browser/check_report.py drives it through
/// chromedriver): no console errors, the sequence diagram and the bytes plot drawn from the run's own
/// events, the table's filter working, and a screenshot of the whole page kept in `ci-artifacts/`.
@Suite struct ReportPageTests {
    struct Page: Decodable {
        struct ConsoleEntry: Decodable {
            var level: String
            var message: String
        }

        struct Filter: Decodable {
            var source: String
            var rowsOfSource: Int
            var visibleAfterUnchecking: Int
            var counterAfterUnchecking: String
        }

        var title: String
        var outcome: String
        var chainLinks: Int
        var chainMissing: Int
        var sequenceMessages: Int
        var sequenceMessagesDeclared: Int
        var sequenceBadges: Int
        var sequenceMissing: Int
        var plotSeries: Int
        var plotRateLines: Int
        var plotLegend: String
        var eventRows: Int
        var explanation: String
        var filter: Filter
        var screenshotBytes: Int
        var console: [ConsoleEntry]
    }

    /// Where screenshots are kept for CI to upload.
    static let artifacts = PackagePaths.root.appendingPathComponent("ci-artifacts")

    static func open(_ report: URL, screenshot name: String) async throws -> (Page, ChildProcess) {
        let screenshot = artifacts.appendingPathComponent(name)
        let script = PackagePaths.root.appendingPathComponent("Tests/Browser/check_report.py").path
        let result = try await ChildProcess.run(
            PackagePaths.python, [script, report.path, screenshot.path], timeout: .seconds(90))
        try #require(result.status == 0, "\(result.transcript)")
        return (try JSONDecoder().decode(Page.self, from: Data(result.standardOutput.utf8)), result)
    }

    static func eventCount(_ reports: URL) throws -> Int {
        try String(contentsOf: reports.appendingPathComponent("timeline.jsonl"), encoding: .utf8)
            .split(separator: "\n").count
    }

    @Test func aPassingRunsReportShowsTheChainTheMessagesAndTheBytes() async throws {
        let (run, reports) = try await HarnessCommand.runCatalogueScenario("silent-push-photo")
        try #require(run.status == 0, "\(run.transcript)")
        let (page, browser) = try await Self.open(
            reports.appendingPathComponent("report.html"), screenshot: "report-silent-push-photo.png")
        #expect(page.console.isEmpty, "\(page.console)")
        #expect(page.title == "PASS silent-push-photo · harness report")
        #expect(page.outcome == "PASS")
        #expect(page.chainLinks == 6 && page.chainMissing == 0)
        // Every link was seen, so each carries its number in the diagram.
        #expect(page.sequenceBadges == 6)
        #expect(page.sequenceMissing == 0)
        // Parse → APNs, APNs → device, device → app, the download's request and response at least.
        #expect(
            page.sequenceMessages >= 5 && page.sequenceMessages == page.sequenceMessagesDeclared,
            "\(browser.standardOutput)")
        #expect(page.plotSeries == 1)
        #expect(page.plotRateLines == 1)
        #expect(page.plotLegend.contains("configured rate 100 KB/s"), "\(page.plotLegend)")
        #expect(
            page.plotLegend.contains("com.razeware.backgroundsession.dailyphoto task 1: 437 KB"), "\(page.plotLegend)")
        #expect(page.eventRows == (try Self.eventCount(reports)))
        #expect(page.filter.rowsOfSource > 0)
        #expect(page.filter.visibleAfterUnchecking == page.eventRows - page.filter.rowsOfSource)
        #expect(page.filter.counterAfterUnchecking == String(page.filter.visibleAfterUnchecking))
        #expect(page.screenshotBytes > 10_000)
    }

    @Test func aFailingRunsReportShowsTheBrokenLinkAndWhy() async throws {
        let header = ScenarioFixtures.header(
            media: "throttle: 1MB/s", device: "backgroundPushBudget: 2s, suspendAfterBackground: 200ms",
            arguments: ["--bug", "never-calls-completion-handler"])
        let file = try ScenarioFixtures.writeConfiguration(
            header + """
                scenarios:
                  forgets-the-handler:
                    steps:
                \(ScenarioFixtures.silentPushSteps(indent: 6))
                    expect:
                      within: 20s
                      chain: [parse.push.accepted, device.push.delivered, app.fetchCompleted]
                      never: [device.watchdog.killed]
                """)
        let reports = file.deletingLastPathComponent().appendingPathComponent("reports")
        let run = try await HarnessCommand.run([
            "run", "forgets-the-handler", "--config", file.path, "--report-dir", reports.path,
        ])
        try #require(run.status == 1, "\(run.transcript)")
        let (page, _) = try await Self.open(
            reports.appendingPathComponent("report.html"), screenshot: "report-failing-run.png")
        #expect(page.console.isEmpty, "\(page.console)")
        #expect(page.outcome == "FAIL")
        #expect(page.chainLinks == 3 && page.chainMissing == 1)
        #expect(page.sequenceBadges == 2)
        #expect(page.sequenceMissing == 1)
        #expect(page.explanation.contains("app.fetchCompleted"), "\(page.explanation)")
        #expect(page.explanation.contains("device.watchdog.killed"), "\(page.explanation)")
        #expect(page.eventRows == (try Self.eventCount(reports)))
    }

    /// The console check can fail: the same page with a script error added reports it.
    @Test func aScriptErrorOnThePageIsSeen() async throws {
        let (run, reports) = try await HarnessCommand.runCatalogueScenario("push-without-content-available")
        try #require(run.status == 0, "\(run.transcript)")
        let original = try String(contentsOf: reports.appendingPathComponent("report.html"), encoding: .utf8)
        let broken = reports.appendingPathComponent("broken.html")
        try original.replacingOccurrences(of: "</body>", with: "<script>window.noSuchFunction();</script></body>")
            .write(to: broken, atomically: true, encoding: .utf8)
        let (page, _) = try await Self.open(broken, screenshot: "report-with-a-script-error.png")
        #expect(
            page.console.contains { $0.level == "SEVERE" && $0.message.contains("noSuchFunction") }, "\(page.console)")
    }
}
