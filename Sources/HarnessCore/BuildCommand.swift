import Foundation
import Processes

/// Runs an app's `build` command before its first launch, with its output passed through.
enum BuildCommand {
    static func run(_ command: [String], in directory: URL) async throws {
        let exited = AsyncStream<Int32>.makeStream()
        let pid: pid_t
        do {
            pid = try ProcessSpawning.spawn(
                "/usr/bin/env", command, environment: ProcessInfo.processInfo.environment, directory: directory,
                standardInput: FileHandle.nullDevice.fileDescriptor,
                standardOutput: FileHandle.standardOutput.fileDescriptor,
                standardError: FileHandle.standardError.fileDescriptor
            ) { ending in
                exited.continuation.yield(ending.status)
                exited.continuation.finish()
            }
        } catch {
            throw StepFailure.buildCannotStart(command: command, error: "\(error)")
        }
        let status = await withTaskCancellationHandler {
            await exited.stream.first { _ in true } ?? -1
        } onCancel: {
            kill(pid, SIGKILL)
        }
        try Task.checkCancellation()
        guard status == 0 else {
            throw StepFailure.buildFailed(command: command, status: Int(status))
        }
    }
}
