import AsyncHTTPClient
import Backends
import Crypto
import DeviceSimulator
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import MediaServer
import NIOCore
import Recording

/// Runs one scenario end to end: builds the apps, starts the services, drives the steps, waits for the
/// chain, writes the reports and stops everything, whatever happened (Ctrl-C included).
public struct ScenarioRunner: Sendable {
    public var configuration: HarnessConfiguration
    /// Where relative paths in harness.yml (media root, app commands) are resolved.
    public var baseDirectory: URL
    public var reportDirectory: URL
    public var logger = Logger(label: "harness")
    /// Record the run into this cassette folder (`--record`).
    public var recordInto: URL?
    /// Replay this cassette: the media server answers from it, and the run's timeline is compared with
    /// the recorded one, which decides the outcome.
    public var replaying: Cassette?
    /// Replaying, the backend not started: a stand-in answers the apps from the cassette and does again
    /// what the backend did (`--without-backend`).
    public var withoutBackend: String?
    /// How the replay's media requests are matched to the cassette's entries.
    public var matching = RequestMatching()
    public var comparison = TimelineComparison.Options()
    /// The SHA-256 of the harness.yml read, kept in a recorded cassette's `meta.json`.
    public var harnessYmlSHA256: String?
    /// How the run was made, kept in a recorded cassette for `harness replay DIR` alone to make it again.
    public var origin: RunOrigin?
    /// Which recorded cassettes are kept: every one (`--record`), or those of failed runs
    /// (`--record-failures`).
    public var keeping = CassetteKeeping.always

    public init(configuration: HarnessConfiguration, baseDirectory: URL, reportDirectory: URL) {
        self.configuration = configuration
        self.baseDirectory = baseDirectory
        self.reportDirectory = reportDirectory
    }

    /// The default report folder: `.harness/runs/<time>-<scenario>`.
    public static func defaultReportDirectory(base: URL, scenario: String) -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return base.appendingPathComponent(".harness/runs/\(formatter.string(from: Date()))-\(scenario)")
    }

    public func run(_ scenario: Scenario, output: @escaping @Sendable (String) -> Void) async -> RunResult {
        let started = ContinuousClock.now
        let timeline = Timeline()
        return await withTaskGroup(of: Void.self, returning: RunResult.self) { printing in
            // Every event as a line, until the timeline finishes at the end of the run (awaited there).
            printing.addTask {
                for await event in timeline.subscribe() {
                    if let line = EventFormatter.line(event) { output(line) }
                }
            }
            timeline.publish(.runStarted, source: "harness", ["scenario": scenario.name])
            var outcome: RunOutcome
            var explanation = ""
            var verdict: ChainVerdict?
            var stack: ServiceStack?
            var backends: BackendGroup?
            var backendPorts: [Int] = []
            var services = scenario.overlay(on: configuration.services)
            var redactor = Self.redactor(for: services)
            var recorder: CassetteRecorder?
            var timelineAtStart: Double?
            var doors: [BackendDoor] = []
            var seeds: [String: UInt64] = [:]
            do {
                try FileManager.default.createDirectory(at: reportDirectory, withIntermediateDirectories: true)
                try await buildApps(for: scenario, output: output)
                // A report folder used again starts from fresh state: a Parse database, device containers
                // or credentials left by an earlier run would change this one.
                let state = reportDirectory.appendingPathComponent("state")
                if FileManager.default.fileExists(atPath: state.path) { try FileManager.default.removeItem(at: state) }
                if let recordInto {
                    let opened = try CassetteRecorder(directory: recordInto, redactor: redactor)
                    timelineAtStart = max(timeline.elapsed - opened.elapsed / 1000, 0)
                    recorder = opened
                    services.recorder = recorder
                }
                // A replay's clock starts where the recording's did: recorded pushes are due by it.
                let pushes = replaying.map {
                    PushSchedule(RecordedPushes(entries: $0.har.log.entries), startingAt: .now)
                }
                if let replaying { services.media.replay = MediaReplay(cassette: replaying, matching: matching) }
                let services = try await ServiceStack.start(
                    services: services, stateDirectory: state, timeline: timeline, logger: logger)
                stack = services
                let keys = Self.keyMaterial(in: services.apns.configuration.credentialsDirectory)
                redactor = Redactor(secrets: redactor.secrets + keys)
                recorder?.redact(also: keys)
                for rule in services.media.faultRules {
                    if let seed = rule.seed { seeds["media.faults[\(rule.id)]"] = seed }
                }
                let digests = FixtureDigests(root: services.media.configuration.root)
                let digest: @Sendable (String) -> String? = { digests.sha256(of: $0) }
                let started = try await startBackends(
                    of: scenario, stack: services, state: state, timeline: timeline, recorder: recorder, output: output,
                    ports: &backendPorts)
                backends = started.group
                doors = started.doors
                (outcome, verdict, explanation) = try await services.whileRunning {
                    try await watching(started.group, doors: started.doors) {
                        try await drive(
                            scenario, services: services, timeline: timeline, digest: digest, pushes: pushes)
                    }
                }
            } catch is CancellationError {
                outcome = .interrupted
            } catch let error as PortInUse {
                outcome = .setupError(await error.inHarnessYAML())
            } catch let error as ConfigurationError {
                outcome = .setupError(error.description)
            } catch let error as CassetteError {
                outcome = .setupError(error.description)
            } catch let error as BackendPlanError {
                outcome = .setupError(error.description)
            } catch let error as BackendGroup.Failure {
                outcome = Task.isCancelled ? .interrupted : .failed(error.description)
                explanation = error.description
            } catch let error as StepFailure {
                outcome = Task.isCancelled ? .interrupted : .failed(error.message)
                explanation = error.message
            } catch {
                outcome = Task.isCancelled ? .interrupted : .setupError("\(error)")
            }
            // Teardown must finish even when the run was cancelled. The apps end first, as the verdict
            // is in: nothing of theirs happens while slower parts stop (a real backend taking its time
            // would let an app be suspended meanwhile, which a replay, whose stand-in stops at once,
            // would not see). Then the backends, then the services.
            if let stack { await uncancelled { await stack.stopDevices() } }
            if let backends { await uncancelled { await backends.stop() } }
            for door in doors { await door.close() }
            if let stack { await uncancelled { await stack.stop() } }
            // Only now: an app still running until the services stopped could reach another run's backend.
            FreePorts.shared.release(backendPorts)
            // A matrix cell's failure the scenario expects is no surprise.
            outcome = scenario.judged(outcome)
            timeline.publish(.runFinished, source: "harness", ["scenario": scenario.name, "outcome": outcome.label])
            timeline.finish()
            await printing.waitForAll()
            if explanation.isEmpty, case .failed(let message) = outcome { explanation = message }
            var result = RunResult(
                scenario: scenario.name, outcome: outcome, verdict: verdict, reportDirectory: reportDirectory,
                duration: started.duration(to: .now), explanation: explanation)
            result.cell = scenario.cell
            if let recorder {
                do {
                    try closeCassette(
                        recorder, scenario: scenario, outcome: outcome, events: timeline.events, seeds: seeds,
                        redactor: redactor, timelineAtStart: timelineAtStart)
                    if keeping.keeps(outcome) {
                        result.cassette = recorder.directory
                        output("cassette: \(recorder.directory.path)\(outcome == .interrupted ? " (interrupted)" : "")")
                    } else {
                        await discard(recorder.directory, after: outcome, output: output)
                    }
                } catch {
                    output("could not finish the cassette: \(error)")
                    result.outcome = .setupError("\(error)")
                }
            }
            if let replaying { judgeReplay(of: replaying, into: &result, events: timeline.events, output: output) }
            if let verdict { output(VerdictFormatter.chain(verdict)) }
            for line in VerdictFormatter.warnings(events: timeline.events) { output(line) }
            if !explanation.isEmpty, outcome != .passed { output(explanation) }
            do {
                try RunReport.write(result, events: timeline.events)
            } catch {
                output("could not write the report into \(reportDirectory.path): \(error)")
            }
            return result
        }
    }

    /// Runs the steps, then waits for the chain to complete, a forbidden event, or the deadline.
    private func drive(
        _ scenario: Scenario, services: ServiceStack, timeline: Timeline,
        digest: @escaping @Sendable (String) -> String?, pushes: PushSchedule?
    ) async throws -> (RunOutcome, ChainVerdict, String) {
        // The apps the steps name, and the others whose bundle id none of those has: two entries may be
        // variants of one app (a fixed or buggy build) under the same bundle id.
        let named = Set(scenario.steps.compactMap(\.app))
        let namedBundleIds = Set(named.compactMap { configuration.apps[$0]?.bundleId })
        let installed = configuration.apps.filter {
            named.contains($0.key) || !namedBundleIds.contains($0.value.bundleId)
        }
        for device in services.devices {
            for app in installed.values.sorted(by: { $0.name < $1.name }) {
                try await device.simulator.install(
                    InstalledApp(
                        bundleId: app.bundleId, command: app.command, workingDirectory: baseDirectory,
                        backgroundModes: app.backgroundModes, environment: app.environment))
            }
        }
        let steps = StepDriver(
            configuration: configuration, services: services, timeline: timeline, digest: digest, pushes: pushes)
        for step in scenario.steps {
            timeline.publish(.stepStarted, source: "harness", ["step": step.description])
            try await steps.perform(step)
            let current = ChainVerdict.evaluate(scenario.expectation, events: timeline.events, fixtureDigest: digest)
            if !current.violations.isEmpty { break }
        }
        let verdict = try await waitForVerdict(
            scenario.expectation, timeline: timeline, digest: digest, after: scenario.expectation.within)
        let files = await checkFiles(scenario, services: services, digest: digest)
        if verdict.passed && files.isEmpty { return (.passed, verdict, "") }
        let explanation = VerdictFormatter.explain(verdict, fileProblems: files, events: timeline.events)
        let summary =
            verdict.violations.first.map { "\($0.0.kind): \($0.1["reason"] ?? $0.1.attributes.description)" }
            ?? verdict.links.first { $0.event == nil }.map { "the chain broke at \($0.pattern)" }
            ?? verdict.missing.first.map { "\($0) never happened" }
            ?? verdict.countProblems.first.map { "expected \($0.0), seen \($0.1)" }
            ?? files.first ?? "the expectation was not met"
        return (.failed(summary), verdict, explanation)
    }

    /// Waits until the chain is complete or a forbidden event appears, giving up after `timeout`. A link
    /// seen only too early does not end the wait: the same kind may come again in its place (a second
    /// suspension, a second screen), and only the scenario's `within` can say when it no longer will.
    private func waitForVerdict(
        _ expectation: Expectation, timeline: Timeline, digest: @escaping @Sendable (String) -> String?,
        after timeout: Duration
    ) async throws -> ChainVerdict {
        let failed: @Sendable ([TimelineEvent]) -> Bool = { events in
            let verdict = ChainVerdict.evaluate(expectation, events: events, fixtureDigest: digest)
            return !verdict.violations.isEmpty || verdict.overrun
        }
        let decided: @Sendable ([TimelineEvent]) -> Bool = { events in
            let verdict = ChainVerdict.evaluate(expectation, events: events, fixtureDigest: digest)
            return verdict.complete && verdict.countProblems.allSatisfy { $0.1 >= $0.0.atLeast } || failed(events)
        }
        // Decided, out of time or cancelled: the verdict below reads the timeline as it is then.
        _ = await timeline.first(within: timeout) { _ in decided(timeline.events) }
        try Task.checkCancellation()
        if expectation.settle > .zero, !failed(timeline.events) {
            // Everything expected came: watch a while longer for what must not happen.
            _ = await timeline.first(within: expectation.settle) { _ in
                failed(timeline.events)
            }
            try Task.checkCancellation()
        }
        return ChainVerdict.evaluate(expectation, events: timeline.events, fixtureDigest: digest)
    }

    /// Checks the files the scenario expects in the container of the app it launches, on the device
    /// each names (the first by default).
    private func checkFiles(_ scenario: Scenario, services: ServiceStack, digest: (String) -> String?) async
        -> [String]
    {
        guard !scenario.expectation.files.isEmpty else { return [] }
        guard let app = scenario.launchedApp.flatMap({ configuration.apps[$0] }) else {
            return ["file expectations need a scenario that launches an app"]
        }
        var problems: [String] = []
        for file in scenario.expectation.files {
            let device = file.device.flatMap { name in services.devices.first { $0.name == name } }
            let whose = file.device.map { "\(app.name)'s container on \($0)" } ?? "\(app.name)'s container"
            guard let paths = await (device?.simulator ?? services.device).containerPaths(of: app.bundleId) else {
                problems.append("\(whose) does not exist: the app was never installed there")
                continue
            }
            let url = URL(fileURLWithPath: paths.home).appendingPathComponent(file.path)
            guard let actual = Self.sha256(of: url) else {
                problems.append("\(whose) has no \(file.path) (looked in \(paths.home))")
                continue
            }
            if let fixture = file.sha256OfFixture, actual != digest(fixture) {
                problems.append("\(file.path) in \(whose) differs from the fixture \(fixture)")
            }
        }
        return problems
    }

    private func buildApps(for scenario: Scenario, output: @Sendable (String) -> Void) async throws {
        var built = Set<String>()
        for step in scenario.steps {
            guard case .launch(let name) = step.action, !built.contains(name), let app = configuration.apps[name],
                let build = app.build
            else { continue }
            built.insert(name)
            output("building \(name): \(build.joined(separator: " "))")
            try await BuildCommand.run(build, in: baseDirectory)
        }
    }

    static func sha256(of url: URL) -> String? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return sha256(of: data)
    }

    /// The hex SHA-256 of `data`.
    public static func sha256(of data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

/// The SHA-256 of each fixture, read once per run however often the chain is evaluated.
final class FixtureDigests: Sendable {
    private let root: URL
    private let cache = LockedState<[String: String?]>([:])

    init(root: URL) { self.root = root }

    func sha256(of path: String) -> String? {
        if let known = cache.withLock({ $0[path] }) { return known }
        let digest = ScenarioRunner.sha256(of: root.appendingPathComponent(path))
        cache.withLock { $0[path] = digest }
        return digest
    }
}

/// A step could not be carried out, or something happened that ends the scenario; ``message`` is
/// what the verdict says.
indirect enum StepFailure: Error, CustomStringConvertible {
    /// An app's build command could not start, or failed.
    case buildCannotStart(command: [String], error: String)
    case buildFailed(command: [String], status: Int)
    /// `on: NAME` for a device the run does not have.
    case noSuchDevice(String)
    /// `waitFor` ran out of time; `count` and `seen` for a wait for several.
    case waitTimedOut(TimelineWaitTimeout, count: Int, seen: Int)
    /// The device refused the step.
    case device(DeviceError)
    /// A network change could not be made.
    case network(NetworkLinkError)
    /// A `push` step's request did not reach Parse, or Parse refused it.
    case parseUnreachable(url: String, error: String)
    case parseRefused(status: UInt, body: String)
    /// A backend ended while the scenario ran.
    case backendEnded(BackendGroup.Failure)
    /// The failure of a step on a named device.
    case onDevice(String, StepFailure)

    var message: String { description }

    var description: String {
        switch self {
        case .buildCannotStart(let command, let error):
            "the build command '\(command.joined(separator: " "))' cannot start: \(error)"
        case .buildFailed(let command, let status):
            "the build command '\(command.joined(separator: " "))' failed with status \(status)"
        case .noSuchDevice(let name): "no device named \(name) in this run"
        case .waitTimedOut(let timeout, let count, let seen):
            "waitFor: \(timeout.message)\(count == 1 ? "" : " (\(seen) seen)")"
        case .device(let error): error.description
        case .network(let error): error.description
        case .parseUnreachable(let url, let error): "cannot reach Parse at \(url)/push: \(error)"
        case .parseRefused(let status, let body): "Parse refused the push: \(status) \(body)"
        case .backendEnded(let failure): failure.description
        case .onDevice(let name, let failure): "\(name): \(failure.message)"
        }
    }
}
