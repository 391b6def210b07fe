import ArgumentParser
import Foundation
import HarnessCore
import NetworkConditions
import Recording

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
        help: ArgumentHelp(
            "Record every run, keeping only the cassettes of runs that failed (one folder per scenario or cell).",
            valueName: "dir"))
    var recordFailures: String?

    /// Where cassettes go, whichever option asked for them.
    private var cassettes: String? { record ?? recordFailures }

    @Option(
        name: .customLong("app"),
        help:
            "Run another app entry in place of one the scenarios name, as NAME=OTHER (e.g. nasa-tv=nasa-tv-python); repeatable."
    )
    var appReplacements: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run each scenario under each of these network profiles (comma-separated; 'none' for no profile) "
                + "on the device's links: a matrix whose cells are named scenario[profile].",
            valueName: "profiles"))
    var network: String?

    func run() async throws {
        if record != nil, recordFailures != nil {
            fail("--record keeps every cassette and --record-failures those of failed runs: give one", code: 2)
        }
        let (loaded, bytes) = try loadConfigurationKeepingBytes(options.path)
        var configuration = loaded
        let digest = ScenarioRunner.sha256(of: bytes)
        setup.apply(to: &configuration)
        var selected = try select(from: configuration)
        selected = replacingApps(appReplacements, in: selected, configuration: configuration, path: options.path)
        if let network { selected = matrix(selected, profiles: network, configuration: configuration) }
        // Shards split the cells of a matrix, not its scenarios.
        selected = sharded(selected)
        guard (1...64).contains(parallel) else { fail("--parallel takes a number of runs at a time, 1 to 64", code: 2) }
        let base = URL(fileURLWithPath: options.path).deletingLastPathComponent().standardizedFileURL
        if let cassettes { recoverKilledRecordings(into: URL(fileURLWithPath: cassettes), of: selected) }
        // With --record-failures, one folder per scenario even for one: a CI job's artifact has one shape.
        if selected.count == 1, !all, shard == nil, recordFailures == nil {
            try await runOne(selected[0], configuration: configuration, base: base, bytes: bytes)
        }
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: "batch")
        var batch = BatchRunner(
            configuration: configuration, baseDirectory: base, reportDirectory: reports, parallel: parallel)
        batch.logger = options.logger
        batch.recordInto = cassettes.map { URL(fileURLWithPath: $0).standardizedFileURL }
        batch.keeping = recordFailures == nil ? .always : .failuresOnly
        batch.harnessYmlSHA256 = digest
        batch.origin = origin(base: base, bytes: bytes, services: configuration.services)
        batch.commit = GitCommit.current(in: base, environment: ProcessInfo.processInfo.environment)
        say("harness run: \(selected.count) scenarios, \(parallel) at a time")
        let names = selected
        let batchRunner = batch
        let results = await runInterruptibly { await batchRunner.run(names) { line in say(line) } }
        let passed = results.filter { $0.outcome == .passed }.count
        let expected = results.filter { if case .expectedFailure = $0.outcome { true } else { false } }.count
        say("\n\(passed) of \(results.count) scenarios passed\(expected > 0 ? ", \(expected) failed as expected" : "")")
        for result in results where result.outcome.exitCode != 0 {
            say("  \(result.outcome.label) \(result.scenario): \(result.reportDirectory.path)")
            if let cassette = result.cassette { say("    cassette: \(cassette.path)") }
        }
        say("report: \(reports.path)")
        throw ExitCode(BatchRunner.exitCode(results))
    }

    /// How this run was made, for its cassettes (read only when recording): the harness.yml's bytes
    /// as they were read, and the options a replay needs to make the same run.
    private func origin(base: URL, bytes: Data, services: ServicesConfiguration) -> RunOrigin? {
        guard cassettes != nil else { return nil }
        return RunOrigin(
            configuration: RunOrigin.keptCopy(of: bytes, services: services),
            command: CassetteMeta.Run(
                scenario: "", config: options.path, baseDirectory: base.path, apps: appReplacements,
                ephemeralPorts: setup.ephemeralPorts, skipBuild: setup.skipBuild))
    }

    /// Deals with what recordings killed before they closed left beside the cassette folders this run
    /// records into (one, or one per scenario), and says what was recovered: the recorder would do it
    /// as it starts, silently (docs/cassettes.md, "A recording cut short").
    private func recoverKilledRecordings(into root: URL, of selected: [Scenario]) {
        let one = selected.count == 1 && !all && shard == nil && recordFailures == nil
        let folders = one ? [root] : selected.map { root.appendingPathComponent($0.name) }
        for folder in folders {
            for outcome in RecordingRecovery.run(beside: folder, for: .recording) {
                if outcome.kind == .failed {
                    printError(outcome.message)
                } else {
                    say(outcome.acted ? outcome.message : "note: \(outcome.message)")
                }
            }
        }
    }

    /// The scenarios named, or all of them.
    private func select(from configuration: HarnessConfiguration) throws -> [Scenario] {
        var selected: [Scenario]
        if all {
            guard scenarios.isEmpty else { fail("name scenarios or use --all, not both", code: 2) }
            selected = configuration.scenarios
        } else if scenarios.isEmpty {
            // `harness run` alone runs the file's first scenario: what 'harness init' writes first.
            guard let first = configuration.scenarios.first else {
                fail("\(options.path) has no scenarios: add one under 'scenarios:' (docs/harness-yml.md)", code: 2)
            }
            if configuration.scenarios.count > 1 {
                say("no scenario named: running the first in \(options.path), \(first.name) (name others, or --all)")
            }
            selected = [first]
        } else {
            selected = scenarios.map { name in
                guard let scenario = configuration.scenario(named: name) else {
                    let names = configuration.scenarios.map(\.name)
                    let known =
                        names.count <= 12
                        ? "known scenarios: " + names.joined(separator: ", ")
                        : "'harness list' shows all \(names.count)"
                    let near = NearestNames.suggestion(for: name, among: names).map { "; \($0)" } ?? ""
                    fail("no scenario named '\(name)' in \(options.path)\(near); \(known)", code: 2)
                }
                return scenario
            }
        }
        return selected
    }

    /// The shard asked for, if any.
    private func sharded(_ selected: [Scenario]) -> [Scenario] {
        guard let shard else { return selected }
        let parts = shard.split(separator: "/").compactMap { Int($0) }
        guard parts.count == 2, parts[1] >= 1, (1...parts[1]).contains(parts[0]) else {
            fail("--shard takes I/N with 1 <= I <= N, such as 2/4, not '\(shard)'", code: 2)
        }
        return BatchRunner.shard(selected, index: parts[0], of: parts[1])
    }

    /// Every scenario under every profile named in `list`, scenario by scenario.
    private func matrix(_ scenarios: [Scenario], profiles list: String, configuration: HarnessConfiguration)
        -> [Scenario]
    {
        let names = list.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        var profiles: [NetworkProfile?] = []
        for name in names {
            if name.lowercased() == "none" {
                profiles.append(nil)
                continue
            }
            do {
                profiles.append(try configuration.services.networkProfiles.named(name))
            } catch {
                fail("--network: \(error.message)", code: 2)
            }
        }
        guard profiles.count <= 32 else { fail("--network takes at most 32 profiles", code: 2) }
        var seen: Set<String> = []
        for profile in profiles where !seen.insert(profile?.name ?? "none").inserted {
            fail("--network names \(profile?.name ?? "none") twice", code: 2)
        }
        return scenarios.flatMap { scenario in profiles.map { scenario.under(profile: $0) } }
    }

    /// One scenario, its timeline live.
    private func runOne(_ scenario: Scenario, configuration: HarnessConfiguration, base: URL, bytes: Data)
        async throws -> Never
    {
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: scenario.name)
        var runner = ScenarioRunner(configuration: configuration, baseDirectory: base, reportDirectory: reports)
        runner.logger = options.logger
        runner.recordInto = record.map { URL(fileURLWithPath: $0).standardizedFileURL }
        runner.harnessYmlSHA256 = ScenarioRunner.sha256(of: bytes)
        runner.origin = origin(base: base, bytes: bytes, services: configuration.services)
        say("harness run \(scenario.name)\(scenario.description.isEmpty ? "" : ": " + scenario.description)")
        let scenarioRunner = runner
        let result = await runInterruptibly { await scenarioRunner.run(scenario) { line in say(line) } }
        say("\n\(result.outcome.label) \(scenario.name) in \(String(format: "%.1f", result.seconds)) s")
        if case .setupError(let message) = result.outcome { printError(message) }
        say("report: \(result.reportDirectory.path)")
        throw ExitCode(result.outcome.exitCode)
    }
}
