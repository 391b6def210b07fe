import ArgumentParser
import Foundation
import HarnessCore

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run scenarios and check their chains.",
        discussion: """
            One scenario shows its timeline live. Several (names, --all, --shard) run one after another, \
            or --parallel N at a time, each with its own services and report folder, and the batch \
            writes junit.xml (a test case per scenario) and summary.json.
            """)

    @OptionGroup var options: ConfigOptions

    @Argument(help: "The scenarios to run (see 'harness list').")
    var scenarios: [String] = []

    @Flag(help: "Run every scenario of the catalogue.")
    var all = false

    @Option(help: "Run this many scenarios at a time (their ports are chosen free, so runs never collide).")
    var parallel = 1

    @Option(help: "Run only shard I of N (1-based) of the selected scenarios, for CI runners: --shard 2/4.")
    var shard: String?

    @Option(help: "Where to write the reports (default .harness/runs/<time>-<scenario or batch>).")
    var reportDir: String?

    @OptionGroup var setup: RunSetup

    @Option(
        help: ArgumentHelp(
            "Record the run's traffic and timeline into a cassette folder (one per scenario inside it for several).",
            valueName: "dir"))
    var record: String?

    @Option(
        name: .customLong("app"),
        help:
            "Run another app entry in place of one the scenarios name, as NAME=OTHER (e.g. nasa-tv=nasa-tv-python); repeatable."
    )
    var appReplacements: [String] = []

    func run() async throws {
        var configuration = try loadConfiguration(options.config)
        setup.apply(to: &configuration)
        var selected = try select(from: configuration)
        selected = replacingApps(appReplacements, in: selected, configuration: configuration, path: options.config)
        guard (1...64).contains(parallel) else { fail("--parallel takes a number of runs at a time, 1 to 64", code: 2) }
        let base = URL(fileURLWithPath: options.config).deletingLastPathComponent().standardizedFileURL
        if selected.count == 1, !all, shard == nil {
            try await runOne(selected[0], configuration: configuration, base: base)
        }
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: "batch")
        var batch = BatchRunner(
            configuration: configuration, baseDirectory: base, reportDirectory: reports, parallel: parallel)
        batch.logger = options.logger
        batch.recordInto = record.map { URL(fileURLWithPath: $0).standardizedFileURL }
        batch.harnessYmlSHA256 = harnessYmlDigest(options.config)
        say("harness run: \(selected.count) scenarios, \(parallel) at a time")
        let names = selected
        let batchRunner = batch
        let results = await runInterruptibly { await batchRunner.run(names) { line in say(line) } }
        let passed = results.filter { $0.outcome == .passed }.count
        say("\n\(passed) of \(results.count) scenarios passed")
        for result in results where result.outcome != .passed {
            say("  \(result.outcome.label) \(result.scenario): \(result.reportDirectory.path)")
        }
        say("report: \(reports.path)")
        throw ExitCode(BatchRunner.exitCode(results))
    }

    /// The scenarios named, or all of them, then the shard asked for.
    private func select(from configuration: HarnessConfiguration) throws -> [Scenario] {
        var selected: [Scenario]
        if all {
            guard scenarios.isEmpty else { fail("name scenarios or use --all, not both", code: 2) }
            selected = configuration.scenarios
        } else {
            guard !scenarios.isEmpty else {
                fail("name a scenario to run, or use --all (see 'harness list')", code: 2)
            }
            selected = scenarios.map { name in
                guard let scenario = configuration.scenario(named: name) else {
                    let known = configuration.scenarios.map(\.name).joined(separator: ", ")
                    fail("no scenario named '\(name)' in \(options.config); known scenarios: \(known)", code: 2)
                }
                return scenario
            }
        }
        if let shard {
            let parts = shard.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2, parts[1] >= 1, (1...parts[1]).contains(parts[0]) else {
                fail("--shard takes I/N with 1 <= I <= N, such as 2/4, not '\(shard)'", code: 2)
            }
            selected = BatchRunner.shard(selected, index: parts[0], of: parts[1])
        }
        return selected
    }

    /// One scenario, its timeline live.
    private func runOne(_ scenario: Scenario, configuration: HarnessConfiguration, base: URL) async throws -> Never {
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: scenario.name)
        var runner = ScenarioRunner(configuration: configuration, baseDirectory: base, reportDirectory: reports)
        runner.logger = options.logger
        runner.recordInto = record.map { URL(fileURLWithPath: $0).standardizedFileURL }
        runner.harnessYmlSHA256 = harnessYmlDigest(options.config)
        say("harness run \(scenario.name)\(scenario.description.isEmpty ? "" : ": " + scenario.description)")
        let scenarioRunner = runner
        let result = await runInterruptibly { await scenarioRunner.run(scenario) { line in say(line) } }
        say("\n\(result.outcome.label) \(scenario.name) in \(String(format: "%.1f", result.seconds)) s")
        if case .setupError(let message) = result.outcome { printError(message) }
        say("report: \(result.reportDirectory.path)")
        throw ExitCode(result.outcome.exitCode)
    }
}
