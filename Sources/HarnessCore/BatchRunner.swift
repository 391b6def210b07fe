import Foundation
import HarnessTimeline
import Logging

/// Runs several scenarios — the whole catalogue, a shard of it — one after the other or `parallel` at
/// a time, each with its own services and report folder under `reportDirectory`, and writes the batch's
/// `junit.xml` (a test case per scenario), `summary.json` and `index.html` (linking each scenario's
/// report.html) there.
public struct BatchRunner: Sendable {
    public var configuration: HarnessConfiguration
    public var baseDirectory: URL
    public var reportDirectory: URL
    public var parallel: Int
    public var logger = Logger(label: "harness")
    /// Record each scenario into a cassette of its own in this folder (`<folder>/<scenario>`).
    public var recordInto: URL?
    /// The SHA-256 of the harness.yml read, for the cassettes' `meta.json`.
    public var harnessYmlSHA256: String?
    /// How the run was made, for each cassette (``ScenarioRunner/origin``).
    public var origin: RunOrigin?
    /// Which cassettes are kept (``ScenarioRunner/keeping``).
    public var keeping = CassetteKeeping.always
    /// The commit the run was made from, for `summary.json` (``GitCommit``).
    public var commit: String?

    public init(configuration: HarnessConfiguration, baseDirectory: URL, reportDirectory: URL, parallel: Int) {
        self.configuration = configuration
        self.baseDirectory = baseDirectory
        self.reportDirectory = reportDirectory
        self.parallel = max(1, parallel)
    }

    /// The scenarios of shard `index` of `count` (1-based): every `count`-th, starting at `index`, so
    /// shards stay balanced as the catalogue grows.
    public static func shard(_ scenarios: [Scenario], index: Int, of count: Int) -> [Scenario] {
        scenarios.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
    }

    /// Runs `scenarios`; `output` gets every line when they run one at a time, and one line per finished
    /// scenario when several run at once (each scenario's lines then go to its `output.txt`).
    public func run(_ scenarios: [Scenario], output: @escaping @Sendable (String) -> Void) async -> [RunResult] {
        let started = ContinuousClock.now
        var configuration = configuration
        // Ports collide between runs that overlap; and the apps are built once, not by every run.
        if parallel > 1 { configuration.useEphemeralPorts() }
        do {
            try await buildApps(of: scenarios, output: output)
        } catch {
            output("a build failed: \(error)")
            return scenarios.map {
                var result = RunResult(
                    scenario: $0.name, outcome: .setupError("a build failed: \(error)"), verdict: nil,
                    reportDirectory: reportDirectory.appendingPathComponent($0.name), duration: .zero)
                result.cell = $0.cell
                return result
            }
        }
        for name in configuration.apps.keys { configuration.apps[name]?.build = nil }
        let prepared = configuration
        var results: [RunResult] = []
        await withTaskGroup(of: RunResult.self) { group in
            var pending = scenarios[...]
            func startNext() {
                guard let scenario = pending.popFirst() else { return }
                group.addTask { await self.runOne(scenario, configuration: prepared, output: output) }
            }
            for _ in 0..<min(parallel, scenarios.count) { startNext() }
            while let result = await group.next() {
                results.append(result)
                if parallel > 1 {
                    output(
                        "\(result.outcome.label) \(result.scenario) in \(String(format: "%.1f", result.seconds)) s\(Self.summary(result))"
                    )
                }
                if !Task.isCancelled { startNext() }
            }
        }
        // An interrupted batch still accounts for every scenario it was given.
        let ran = Set(results.map(\.scenario))
        for scenario in scenarios where !ran.contains(scenario.name) {
            var skipped = RunResult(
                scenario: scenario.name, outcome: .skipped, verdict: nil,
                reportDirectory: reportDirectory.appendingPathComponent(scenario.name), duration: .zero)
            skipped.cell = scenario.cell
            results.append(skipped)
        }
        let order = Dictionary(uniqueKeysWithValues: scenarios.enumerated().map { ($1.name, $0) })
        results.sort { order[$0.scenario, default: 0] < order[$1.scenario, default: 0] }
        let seconds =
            Double(started.duration(to: .now).components.seconds)
            + Double(started.duration(to: .now).components.attoseconds) / 1e18
        writeReports(results, seconds: seconds, output: output)
        return results
    }

    private func runOne(
        _ scenario: Scenario, configuration: HarnessConfiguration, output: @escaping @Sendable (String) -> Void
    ) async -> RunResult {
        let directory = reportDirectory.appendingPathComponent(scenario.name)
        var runner = ScenarioRunner(
            configuration: configuration, baseDirectory: baseDirectory, reportDirectory: directory)
        runner.logger = logger
        runner.recordInto = recordInto?.appendingPathComponent(scenario.name)
        runner.harnessYmlSHA256 = harnessYmlSHA256
        runner.origin = origin
        runner.keeping = keeping
        guard parallel > 1 else {
            output("\nharness run \(scenario.name)\(scenario.description.isEmpty ? "" : ": " + scenario.description)")
            let result = await runner.run(scenario, output: output)
            output("\(result.outcome.label) \(scenario.name) in \(String(format: "%.1f", result.seconds)) s")
            return result
        }
        let lines = LockedState<[String]>([])
        let result = await runner.run(scenario) { line in lines.withLock { $0.append(line) } }
        let text = lines.withLock { $0.joined(separator: "\n") } + "\n"
        let file = directory.appendingPathComponent("output.txt")
        do {
            try text.write(to: file, atomically: true, encoding: .utf8)
        } catch {
            // Its report and verdict are written already; the batch's own output says what is missing.
            output(
                "harness: \(scenario.name)'s output could not be written to \(file.path): \(error.localizedDescription)"
            )
        }
        return result
    }

    private static func summary(_ result: RunResult) -> String {
        switch result.outcome {
        case .passed: ""
        case .failed(let message), .setupError(let message), .expectedFailure(let message): ": \(message)"
        case .interrupted, .skipped: ""
        }
    }

    private func buildApps(of scenarios: [Scenario], output: @Sendable (String) -> Void) async throws {
        var commands: [[String]] = []
        for scenario in scenarios {
            for case .launch(let name) in scenario.steps.map(\.action) {
                guard let build = configuration.apps[name]?.build, !commands.contains(build) else { continue }
                commands.append(build)
            }
        }
        for command in commands {
            output("building: \(command.joined(separator: " "))")
            try await BuildCommand.run(command, in: baseDirectory)
        }
    }

    private func writeReports(_ results: [RunResult], seconds: Double, output: @Sendable (String) -> Void) {
        let summary = BatchSummary(
            results: results, seconds: seconds, parallel: parallel, commit: commit,
            harnessYmlSha256: harnessYmlSHA256)
        do {
            try BatchSummary.write(
                summary, results: results, into: reportDirectory, seconds: seconds, parallel: parallel)
        } catch {
            output("could not write the batch report into \(reportDirectory.path): \(error)")
        }
    }

    /// The batch's exit code: interrupted, else a setup error, else a failure, else 0.
    public static func exitCode(_ results: [RunResult]) -> Int32 {
        let codes = Set(results.map(\.outcome.exitCode))
        for code: Int32 in [130, 2, 1] where codes.contains(code) { return code }
        return 0
    }
}
