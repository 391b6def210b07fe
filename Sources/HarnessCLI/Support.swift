import Foundation
import HarnessCore
import HarnessTimeline

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
    do {
        return try ConfigurationLoader.load(path: path)
    } catch let error as ConfigurationError {
        fail(error.description, code: 2)
    }
}

/// Calls `handler` on the first SIGINT or SIGTERM, so the run can stop its app and services and still
/// write its report; a second signal exits at once with 130.
final class InterruptSignals {
    private let sources: [any DispatchSourceSignal]

    init(handler: @escaping @Sendable () -> Void) {
        let received = LockedState(0)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let count = received.withLock { count in
                    count += 1
                    return count
                }
                guard count == 1 else {
                    FileHandle.standardError.write(Data("harness: interrupted again, exiting now\n".utf8))
                    exit(130)
                }
                FileHandle.standardError.write(
                    Data("\nharness: interrupted, stopping the app and services… (again to exit at once)\n".utf8))
                handler()
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
