import ArgumentParser
import Foundation
import HarnessCore
import Processes
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

    @Option(
        help: ArgumentHelp(
            "Replay under this network profile ('none' for none) in place of the recorded matrix cell's.",
            valueName: "profile"))
    var network: String?

    @Option(
        help: ArgumentHelp(
            "Do not start this backend: answer the apps from the cassette and send again what it sent.",
            valueName: "name"))
    var withoutBackend: String?

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
        guard opened.meta?.scenario != nil else {
            fail(
                "\(cassette) holds no scenario (it is a HAR, or a 'harness serve' recording): "
                    + "serve it with 'harness serve --replay \(cassette)'", code: 2)
        }
        let made = try replayed(opened)
        for line in made.said { say(line) }
        let name = made.scenario.name
        let reports =
            reportDir.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? ScenarioRunner.defaultReportDirectory(base: made.base, scenario: name + "-replay")
        let configuration = made.configuration
        let base = made.base
        var runner = ScenarioRunner(configuration: configuration, baseDirectory: base, reportDirectory: reports)
        runner.logger = options.logger
        runner.replaying = opened
        if let withoutBackend {
            if let refusal = ReplayedRun.cannotStandIn(
                for: withoutBackend, scenario: made.scenario, cassette: opened)
            {
                fail(refusal, code: 2)
            }
            runner.withoutBackend = withoutBackend
            say("stands in for backend \(withoutBackend): it is not started; the cassette answers the apps")
        }
        runner.matching = matching
        runner.comparison.tolerance = tolerance
        say("harness replay \(name) from \(cassette)")
        let scenarioRunner = runner
        let replayed = made.scenario
        let result = await runInterruptibly { await scenarioRunner.run(replayed) { line in say(line) } }
        say("\n\(result.outcome.label) replay of \(name) in \(String(format: "%.1f", result.seconds)) s")
        if case .setupError(let message) = result.outcome { printError(message) }
        say("report: \(result.reportDirectory.path)")
        throw ExitCode(result.outcome.exitCode)
    }
}

/// The run a replay makes: the scenario to run, from which harness.yml, in which folder, and what was
/// said about it.
struct ReplayedRun {
    var configuration: HarnessConfiguration
    var scenario: Scenario
    var base: URL
    var said: [String]
}

extension Replay {
    /// Reads what ``ReplayPlan`` decides: the recorded copy of harness.yml or the file named, the
    /// scenario and its cell, the apps. Exits 2 naming what cannot be used or found.
    func replayed(_ opened: Cassette) throws -> ReplayedRun {
        let meta = opened.meta
        let kept: Bool
        do {
            kept = try opened.recordedConfiguration() != nil
        } catch let error as CassetteError {
            fail(error.description, code: 2)
        }
        let plan = ReplayPlan.decide(
            scenario: meta?.scenario ?? "", recipe: meta?.run, keepsConfiguration: kept,
            command: ReplayPlan.Command(
                config: options.config, apps: appReplacements, network: network,
                ephemeralPorts: setup.ephemeralPorts, skipBuild: setup.skipBuild,
                currentDirectory: FileManager.default.currentDirectoryPath)
        ) { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        }
        var configuration: HarnessConfiguration
        let source: String
        switch plan.configuration {
        case .recorded:
            source = opened.directory.appendingPathComponent(CassetteMeta.Run.configurationFile).path
            do {
                guard let bytes = try opened.recordedConfiguration() else {
                    fail(
                        "\(source) is missing: the cassette says how its run was made but not its harness.yml", code: 2)
                }
                configuration = try ConfigurationLoader.parse(
                    String(decoding: bytes, as: UTF8.self), file: source,
                    baseDirectory: URL(fileURLWithPath: plan.baseDirectory))
            } catch let error as CassetteError {
                fail(error.description, code: 2)
            } catch let error as ConfigurationError {
                fail(error.description, code: 2)
            } catch {
                fail("\(source): \(error)", code: 2)
            }
        case .file(let path):
            source = path
            configuration = try loadConfiguration(path)
            if let recorded = meta?.harnessYmlSha256, recorded != harnessYmlDigest(path) {
                say("note: \(path) has changed since the recording; the scenario is replayed as it is now")
            }
        }
        if plan.ephemeralPorts { configuration.useEphemeralPorts() }
        if plan.skipBuild {
            for name in configuration.apps.keys { configuration.apps[name]?.build = nil }
        }
        guard var scenario = configuration.scenario(named: plan.scenario) else {
            fail("the cassette replays scenario '\(plan.scenario)', which \(source) does not have", code: 2)
        }
        scenario = replacingApps(plan.apps, in: [scenario], configuration: configuration, path: source)[0]
        if let column = plan.network {
            if column.lowercased() == "none" {
                scenario = scenario.under(profile: nil)
            } else {
                do {
                    scenario = scenario.under(profile: try configuration.services.networkProfiles.named(column))
                } catch {
                    fail("--network: \(error.message)", code: 2)
                }
            }
        }
        let base = URL(fileURLWithPath: plan.baseDirectory).standardizedFileURL
        if let missing = ReplayedRun.missingProgram(of: scenario, in: configuration, base: base) {
            fail(missing, code: 2)
        }
        var said = plan.notes.map { "note: " + $0 }
        said += plan.overrides.map { "overridden: " + $0 }
        if plan.configuration == .recorded {
            // A cassette's harness.yml runs its commands as one's own would: say which, before they run.
            said += ReplayedRun.commands(of: scenario, in: configuration, without: withoutBackend).map {
                "runs, as the cassette's harness.yml says: " + $0
            }
        }
        return ReplayedRun(configuration: configuration, scenario: scenario, base: base, said: said)
    }
}

extension ReplayedRun {
    /// Why a replay cannot stand in for `backend`, in words; nil when it can: the scenario names it and
    /// no other backend (the cassette cannot tell which of two sent a notification), and the cassette
    /// holds the apps' exchanges with it (recorded by a harness that keeps them).
    static func cannotStandIn(for backend: String, scenario: Scenario, cassette: Cassette) -> String? {
        guard scenario.backends.contains(backend) else {
            let named = scenario.backends.isEmpty ? "none" : scenario.backends.joined(separator: ", ")
            return "--without-backend: scenario '\(scenario.name)' has no backend '\(backend.prefix(100))' "
                + "(its backends: \(named))"
        }
        let others = scenario.backends.filter { $0 != backend }
        guard others.isEmpty else {
            return "--without-backend: scenario '\(scenario.name)' runs \(others.joined(separator: ", ")) beside "
                + "\(backend); what each sent cannot be told apart in the cassette, so only a scenario with one "
                + "backend replays without it"
        }
        let service = BackendScript.service(of: backend)
        guard cassette.har.log.entries.contains(where: { $0.service == service }) else {
            return "--without-backend: \(cassette.directory.path) holds no exchange of the apps with backend "
                + "\(backend) (a recording made before the harness kept them has none); record the run again"
        }
        return nil
    }

    /// The commands the scenario runs: each app's build and launch command, each backend's.
    static func commands(of scenario: Scenario, in configuration: HarnessConfiguration, without: String? = nil)
        -> [String]
    {
        var lines: [String] = []
        for name in Set(scenario.steps.compactMap(\.app)).sorted() {
            guard let app = configuration.apps[name] else { continue }
            if let build = app.build { lines.append("app \(name) built with '\(build.joined(separator: " "))'") }
            lines.append("app \(name) '\(app.command.joined(separator: " "))'")
        }
        for name in scenario.backends where name != without {
            guard let backend = configuration.backend(named: name) else { continue }
            lines.append("backend \(name) '\(backend.command.joined(separator: " "))'")
        }
        if let command = configuration.services.apns.deliveryCommand {
            lines.append("services.apns.deliveryCommand '\(command.joined(separator: " "))'")
        }
        return lines
    }

    /// The first program the scenario's apps need that is not there, in words: the build command's when
    /// the app is built first, else the app's own; nil when each is found (a path from `base`, a bare
    /// name on `PATH`).
    static func missingProgram(of scenario: Scenario, in configuration: HarnessConfiguration, base: URL) -> String? {
        for name in Set(scenario.steps.compactMap(\.app)).sorted() {
            guard let app = configuration.apps[name] else { continue }
            let command = app.build ?? app.command
            guard let program = command.first else { continue }
            let what = app.build == nil ? "runs" : "is built with"
            // Found as the launch finds it.
            let url = AppProcess.resolve(program, in: base)
            if FileManager.default.isExecutableFile(atPath: url.path) { continue }
            guard program.contains("/") else { return "the app '\(name)' \(what) '\(program)', which is not on PATH" }
            return "the app '\(name)' \(what) '\(program)', which is not an executable file in \(base.path) "
                + "(\(url.path)); replay from the project's folder with -c, or build the app there"
        }
        return nil
    }
}
