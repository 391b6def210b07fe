import ArgumentParser
import Foundation
import HarnessCore

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a scenario and check its chain.")

    @OptionGroup var options: ConfigOptions

    @Argument(help: "The scenario to run (see 'harness list').")
    var scenario: String

    @Option(help: "Where to write timeline.jsonl and junit.xml (default .harness/runs/<time>-<scenario>).")
    var reportDir: String?

    @Flag(help: "Bind every service to a free port instead of the configured ones, so runs can share a machine.")
    var ephemeralPorts = false

    @Flag(help: "Do not run the apps' build commands (they are already built).")
    var skipBuild = false

    @Option(
        name: .customLong("app"),
        help: "Run another app entry in place of one the scenario names, as NAME=OTHER (e.g. nasa-tv=nasa-tv-python); repeatable.")
    var appReplacements: [String] = []

    func run() async throws {
        var configuration = try loadConfiguration(options.config)
        if ephemeralPorts { configuration.services.useEphemeralPorts() }
        if skipBuild {
            for name in configuration.apps.keys { configuration.apps[name]?.build = nil }
        }
        guard var scenario = configuration.scenario(named: scenario) else {
            let known = configuration.scenarios.map(\.name).joined(separator: ", ")
            fail("no scenario named '\(self.scenario)' in \(options.config); known scenarios: \(known)", code: 2)
        }
        for replacement in appReplacements {
            let names = replacement.split(separator: "=", maxSplits: 1).map(String.init)
            guard names.count == 2 else { fail("--app takes NAME=OTHER, not '\(replacement)'", code: 2) }
            for name in names where configuration.apps[name] == nil {
                let known = configuration.apps.keys.sorted().joined(separator: ", ")
                fail("--app \(replacement): no app named '\(name)' in \(options.config); apps: \(known)", code: 2)
            }
            scenario.steps = scenario.steps.map { $0.replacingApp(names[0], with: names[1]) }
        }
        let base = URL(fileURLWithPath: options.config).deletingLastPathComponent().standardizedFileURL
        let reports = reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: scenario.name)
        var runner = ScenarioRunner(configuration: configuration, baseDirectory: base, reportDirectory: reports)
        runner.logger = options.logger
        say("harness run \(scenario.name)\(scenario.description.isEmpty ? "" : ": " + scenario.description)")
        let chosen = scenario
        let task = Task { await runner.run(chosen) { line in say(line) } }
        let signals = InterruptSignals { task.cancel() }
        let result = await task.value
        signals.cancel()
        let seconds = Double(result.duration.components.seconds) + Double(result.duration.components.attoseconds) / 1e18
        say("\n\(result.outcome.label) \(scenario.name) in \(String(format: "%.1f", seconds)) s")
        if case .setupError(let message) = result.outcome { printError(message) }
        say("report: \(result.reportDirectory.path)")
        throw ExitCode(result.outcome.exitCode)
    }
}
