import DeviceSimulator
import Foundation

/// Runs an app's `build` command before its first launch, with its output passed through.
enum BuildCommand {
    static func run(_ command: [String], in directory: URL) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.currentDirectoryURL = directory
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        do {
            try ProcessSpawning.serialized { try process.run() }
        } catch {
            throw StepFailure(message: "the build command '\(command.joined(separator: " "))' cannot start: \(error)")
        }
        let status = await withTaskCancellationHandler {
            await exited.stream.first { _ in true } ?? -1
        } onCancel: {
            // SIGKILL, not SIGTERM: a child spawned from one of Swift's task threads inherits their
            // signal mask, which blocks SIGTERM.
            kill(process.processIdentifier, SIGKILL)
        }
        try Task.checkCancellation()
        guard status == 0 else {
            throw StepFailure(
                message: "the build command '\(command.joined(separator: " "))' failed with status \(status)")
        }
    }
}
