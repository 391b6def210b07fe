import Foundation
import Processes

/// Runs a program to completion and collects what it printed: how tests drive real peers (curl,
/// Python clients) and the built `harness` binary, as a user would.
public struct ChildProcess: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String

    /// The output and error streams together, for assertion messages.
    public var transcript: String { standardOutput + "\n--- stderr ---\n" + standardError }

    /// Runs the program; after `timeout` it is killed and the call throws ``Timeout``, which carries
    /// what the program had printed by then.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        currentDirectory: URL? = nil, standardInput: Data? = nil, timeout: Duration = .seconds(120)
    ) async throws -> ChildProcess {
        let deadline = Deadline()
        let result = try await runToEnd(
            executable, arguments, environment: environment, currentDirectory: currentDirectory,
            standardInput: standardInput, deadline: (timeout, deadline))
        if deadline.passed {
            throw Timeout(
                what: "\(executable) \(arguments.joined(separator: " "))", after: timeout,
                printed: result.transcript)
        }
        return result
    }

    /// Set when the deadline killed the child.
    private final class Deadline: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var passed: Bool {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    private static func runToEnd(
        _ executable: String, _ arguments: [String], environment: [String: String], currentDirectory: URL?,
        standardInput: Data?, deadline: (limit: Duration, passed: Deadline)
    ) async throws -> ChildProcess {
        let (exited, continuation) = AsyncStream.makeStream(of: Int32.self)
        // Pipes no other child inherits (see ProcessSpawning).
        let output = ProcessSpawning.pipe()
        let error = ProcessSpawning.pipe()
        let input = ProcessSpawning.pipe()
        let pid = try ProcessSpawning.spawn(
            executable, arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            directory: currentDirectory, standardInput: input.fileHandleForReading.fileDescriptor,
            standardOutput: output.fileHandleForWriting.fileDescriptor,
            standardError: error.fileHandleForWriting.fileDescriptor
        ) { ending in
            continuation.yield(ending.status)
            continuation.finish()
        }
        // The child has its own copies of its ends; ours close, so that the reads see the end.
        try? input.fileHandleForReading.close()
        try? output.fileHandleForWriting.close()
        try? error.fileHandleForWriting.close()
        if let standardInput { input.fileHandleForWriting.write(standardInput) }
        try input.fileHandleForWriting.close()
        // Read both pipes while the child runs, so a chatty child never blocks on a full pipe; on
        // threads of their own, since a blocking read on the cooperative pool can starve the servers
        // under test.
        async let outputData = readToEnd(output.fileHandleForReading)
        async let errorData = readToEnd(error.fileHandleForReading)
        let timer = Task {
            try await Task.sleep(for: deadline.limit)
            deadline.passed.passed = true
            kill(pid, SIGKILL)
        }
        let status = await withTaskCancellationHandler {
            await exited.first { _ in true } ?? -1
        } onCancel: {
            kill(pid, SIGKILL)
        }
        timer.cancel()
        return ChildProcess(
            status: status, standardOutput: String(decoding: await outputData, as: UTF8.self),
            standardError: String(decoding: await errorData, as: UTF8.self))
    }
}

/// Something a test waited for did not happen in time.
public struct Timeout: Error, CustomStringConvertible {
    public var what: String
    public var after: Duration
    /// What a killed program had printed by then, if the wait was for a program.
    public var printed: String?

    public init(what: String, after: Duration, printed: String? = nil) {
        self.what = what
        self.after = after
        self.printed = printed
    }

    public var description: String {
        "\(what) did not finish within \(after)" + (printed.map { "; it had printed:\n\($0)" } ?? "")
    }
}

/// Waits for `operation`, failing with ``Timeout`` after `limit`: how tests wait for an event that may
/// never come.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw Timeout(what: what, after: limit)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Reads a pipe to its end on a thread of its own. Not on Dispatch's global queues: on Linux Swift's
/// tasks run on those same threads, and a few children that never close their output would block
/// every one of them, the deadline's timer task included.
private func readToEnd(_ handle: FileHandle) async -> Data {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: handle.readDataToEndOfFile()) }.start()
    }
}

/// Paths of the package under test.
public enum PackagePaths {
    /// The package root, found from this file's location.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The folder holding the built products of the current build (debug or release).
    public static var binaries: URL {
        let candidates = ["debug", "release"].map { root.appendingPathComponent(".build/\($0)") }
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: bundle.appendingPathComponent("harness").path) { return bundle }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("harness").path) }
            ?? candidates[0]
    }

    /// The Python with the third-party peers, installed by `ci/test` into `.venv`.
    public static var python: String {
        if let configured = ProcessInfo.processInfo.environment["HARNESS_PYTHON"] { return configured }
        return root.appendingPathComponent(".venv/bin/python").path
    }

    /// A new empty folder for one test.
    public static func temporaryDirectory(_ name: String = #function) throws -> URL {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("pushharness-tests-\(safe)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
