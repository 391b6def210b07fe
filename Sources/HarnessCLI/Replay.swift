import ArgumentParser
import Foundation
import HarnessCore
import Recording

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a recorded scenario again in its recorded world and compare the timelines.",
        discussion: """
            The media server answers from the cassette (the recorded bytes, pacing and faults); the \
            scenario's steps run as recorded. Exit 0 when the new timeline is equivalent to the recorded \
            one, 1 with the first divergence (also in junit.xml and report.html), 2 when the cassette or \
            harness.yml cannot be used.
            """)

    @OptionGroup var options: ConfigOptions

    @Argument(help: ArgumentHelp("The cassette folder 'harness run --record' wrote.", valueName: "dir"))
    var cassette: String

    @Option(
        name: .customLong("app"),
        help: "Replay against another app entry, as NAME=OTHER (e.g. nasa-tv=nasa-tv-python); repeatable.")
    var appReplacements: [String] = []

    @Option(help: "How many seconds an event's distance from the event before it may move.")
    var tolerance: Double = TimelineComparison.Options().tolerance

    @Option(help: "Where to write the reports (default .harness/runs/<time>-<scenario>-replay).")
    var reportDir: String?

    @OptionGroup var setup: RunSetup

    @OptionGroup var matching: MatchingOptions

    func run() async throws {
        guard tolerance.isFinite, (0...3600).contains(tolerance) else {
            fail("--tolerance takes seconds from 0 to 3600, not \(tolerance)", code: 2)
        }
        let matching = matching.resolved()
        // A recording killed before it closed is recovered first, into the folder if it holds nothing
        // (docs/cassettes.md, "A recording cut short").
        let recoveries = RecordingRecovery.run(beside: URL(fileURLWithPath: cassette), for: .replaying)
        for outcome in recoveries where outcome.acted { say(outcome.message) }
        for outcome in recoveries where outcome.kind == .failed { printError(outcome.message) }
        let opened: Cassette
        do {
            opened = try Cassette.open(URL(fileURLWithPath: cassette))
        } catch let error as CassetteError {
            let beside = recoveries.filter { [.running, .unowned].contains($0.kind) }.map { "; " + $0.message }
            fail(error.description + beside.joined(), code: 2)
        }
        if let recovered = opened.meta?.recovered {
            fail(
                "\(cassette) was recovered from a recording that process \(recovered.pid) was making when it was "
                    + "killed (\(recovered.summary)): it holds the traffic but not the scenario or the timeline to "
                    + "replay and compare; serve its traffic with 'harness serve --replay \(cassette)'", code: 2)
        }
        if let why = opened.meta?.incompleteness, opened.meta?.complete == false {
            say("note: \(cassette) is incomplete: \(why)")
        }
        guard let name = opened.meta?.scenario else {
            fail(
                "\(cassette) holds no scenario (it is a HAR, or a 'harness serve' recording): "
                    + "serve it with 'harness serve --replay \(cassette)'", code: 2)
        }
        var configuration = try loadConfiguration(options.config)
        setup.apply(to: &configuration)
        guard var scenario = configuration.scenario(named: name) else {
            fail("the cassette replays scenario '\(name)', which \(options.config) does not have", code: 2)
        }
        scenario = replacingApps(appReplacements, in: [scenario], configuration: configuration, path: options.config)[0]
        if let recorded = opened.meta?.harnessYmlSha256, recorded != harnessYmlDigest(options.config) {
            say("note: \(options.config) has changed since the recording; the scenario is replayed as it is now")
        }
        let base = URL(fileURLWithPath: options.config).deletingLastPathComponent().standardizedFileURL
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: base, scenario: name + "-replay")
        var runner = ScenarioRunner(configuration: configuration, baseDirectory: base, reportDirectory: reports)
        runner.logger = options.logger
        runner.replaying = opened
        runner.matching = matching
        runner.comparison.tolerance = tolerance
        say("harness replay \(name) from \(cassette)")
        let scenarioRunner = runner
        let replayed = scenario
        let result = await runInterruptibly { await scenarioRunner.run(replayed) { line in say(line) } }
        say("\n\(result.outcome.label) replay of \(name) in \(String(format: "%.1f", result.seconds)) s")
        if case .setupError(let message) = result.outcome { printError(message) }
        say("report: \(result.reportDirectory.path)")
        throw ExitCode(result.outcome.exitCode)
    }
}
