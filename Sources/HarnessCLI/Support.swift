import Foundation
import HarnessCore
import HarnessTimeline
import UnixSignals

/// The live view on standard output: progress bars redrawn in place and colours on a terminal (unless
/// `NO_COLOR`), whole plain lines into a file or a pipe. Written at once, not when a buffer fills, so
/// a pipe (CI logs, a test waiting for a line) sees each event as it happens.
let liveView = LiveView(
    terminal: isatty(STDOUT_FILENO) == 1,
    colour: TerminalStyle.shouldColour(
        isTerminal: isatty(STDOUT_FILENO) == 1, environment: ProcessInfo.processInfo.environment),
    write: { FileHandle.standardOutput.write(Data($0.utf8)) })

func say(_ line: String) {
    liveView.say(line)
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("harness: \(message)\n".utf8))
}

func fail(_ message: String, code: Int32) -> Never {
    printError(message)
    exit(code)
}

/// Loads harness.yml, or exits 2 with the file, line and key of the problem.
func loadConfiguration(_ path: String) throws -> HarnessConfiguration {
    try loadConfigurationKeepingBytes(path).configuration
}

/// Loads harness.yml from its bytes, read once, and returns them too: what a run hashes and keeps in a
/// cassette is what it parsed. Exits 2 with the file, line and key of the problem.
func loadConfigurationKeepingBytes(_ path: String) throws -> (configuration: HarnessConfiguration, bytes: Data) {
    do {
        let bytes = try ConfigurationLoader.read(path: path)
        return (try ConfigurationLoader.parse(String(decoding: bytes, as: UTF8.self), file: path), bytes)
    } catch let error as ConfigurationError {
        fail(error.description, code: 2)
    }
}

/// Calls `handler` on the first SIGINT or SIGTERM, so the run can stop its app and services and still
/// write its report; a second signal exits at once with 130. The signals are trapped when `trap`
/// returns.
final class InterruptSignals: Sendable {
    private let watching: Task<Void, Never>

    private init(watching: Task<Void, Never>) { self.watching = watching }

    static func trap(handler: @escaping @Sendable () -> Void) async -> InterruptSignals {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        // Cancelled by cancel(), once the work it guards has ended.
        return InterruptSignals(
            watching: Task {
                var received = 0
                for await _ in signals {
                    received += 1
                    guard received == 1 else {
                        FileHandle.standardError.write(Data("harness: interrupted again, exiting now\n".utf8))
                        exit(130)
                    }
                    FileHandle.standardError.write(
                        Data("\nharness: interrupted, stopping the app and services… (again to exit at once)\n".utf8))
                    handler()
                }
            })
    }

    func cancel() { watching.cancel() }
}

/// What `body` threw, or nil: for a command that tidies up before it reports the failure.
func thrownError(by body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

/// Runs `work` on a task that the first SIGINT or SIGTERM cancels (``InterruptSignals``).
func runInterruptibly<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) async -> Value {
    let state = LockedState<(task: Task<Value, Never>?, interrupted: Bool)>((nil, false))
    let signals = await InterruptSignals.trap {
        let task = state.withLock { state in
            state.interrupted = true
            return state.task
        }
        task?.cancel()
    }
    // Cancelled by the first signal, awaited below.
    let task = Task { await work() }
    if state.withLock({ state in
        state.task = task
        return state.interrupted
    }) {
        task.cancel()
    }
    let value = await task.value
    signals.cancel()
    return value
}

/// The scenarios with each `--app NAME=OTHER` applied to their steps; exits 2 naming a bad one.
func replacingApps(
    _ replacements: [String], in scenarios: [Scenario], configuration: HarnessConfiguration, path: String
) -> [Scenario] {
    var scenarios = scenarios
    for replacement in replacements {
        let names = replacement.split(separator: "=", maxSplits: 1).map(String.init)
        guard names.count == 2 else { fail("--app takes NAME=OTHER, not '\(replacement)'", code: 2) }
        for name in names where configuration.apps[name] == nil {
            let known = configuration.apps.keys.sorted().joined(separator: ", ")
            fail("--app \(replacement): no app named '\(name)' in \(path); apps: \(known)", code: 2)
        }
        for index in scenarios.indices {
            scenarios[index].steps = scenarios[index].steps.map { $0.replacingApp(names[0], with: names[1]) }
        }
    }
    return scenarios
}

/// The SHA-256 of the configuration file, for a cassette's `meta.json`.
func harnessYmlDigest(_ path: String) -> String? {
    ScenarioRunner.sha256(ofFile: URL(fileURLWithPath: path))
}
