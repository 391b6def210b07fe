import Foundation
import HarnessTimeline

#if canImport(Glibc)
import Glibc
#endif

/// One running process of an app under test (or of a backend beside it): spawned, stopped, continued
/// and killed with real signals.
///
/// Standard output and error are read line by line; the last lines are kept so that a launch failure
/// can show what the program said before it died.
public final class AppProcess: @unchecked Sendable {
    public struct Termination: Sendable {
        public var status: Int32
        public var signal: Int32?

        public var description: String {
            if let signal { return "killed by signal \(signal)" }
            return "exited with status \(status)"
        }
    }

    /// The child's process id.
    public let pid: Int32
    /// Whether it leads a process group of its own, which its signals then go to.
    public let leadsProcessGroup: Bool
    private let outputLines = LockedState<[String]>([])
    private let exited = AsyncStream.makeStream(of: Void.self)
    private let outputEnded = AsyncStream.makeStream(of: Void.self)
    private static let keptLines = 20

    /// Starts the process. `onLine` sees every output line; `onExit` is called once, when it ends.
    /// `kind` names the program in errors ("app", "backend"). With `processGroup`, it leads a process
    /// group of its own and every signal goes to the group: the programs it starts get them too.
    public init(
        command: [String], workingDirectory: URL, environment: [String: String], kind: String = "app",
        processGroup: Bool = false, onLine: @escaping @Sendable (String) -> Void,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws(LaunchError) {
        guard let executable = command.first else { throw LaunchError.emptyCommand(kind: kind) }
        let resolved = Self.resolve(executable, in: workingDirectory)
        let output = ProcessSpawning.pipe()
        // A plain thread with blocking reads: Foundation's readabilityHandler on Linux can leave a
        // dispatch source registered on a pipe that is already closed, which crashes libdispatch.
        let lines = outputLines
        let outputEnded = outputEnded.continuation
        let reader = output.fileHandleForReading
        let thread = Thread {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 16384)
            while true {
                let count = read(reader.fileDescriptor, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { kept in
                        kept.append(line)
                        if kept.count > Self.keptLines { kept.removeFirst(kept.count - Self.keptLines) }
                    }
                    onLine(line)
                }
            }
            // Read to its end: a failed close loses nothing read.
            try? reader.close()
            outputEnded.finish()
        }
        thread.name = "app-output"
        let exited = exited.continuation
        leadsProcessGroup = processGroup
        let nullDevice = FileHandle.nullDevice
        do {
            pid = try ProcessSpawning.spawn(
                resolved.path, Array(command.dropFirst()), environment: environment, directory: workingDirectory,
                standardInput: nullDevice.fileDescriptor, standardOutput: output.fileHandleForWriting.fileDescriptor,
                standardError: output.fileHandleForWriting.fileDescriptor, newProcessGroup: processGroup
            ) { ending in
                onExit(Termination(status: ending.status, signal: ending.signal))
                exited.finish()
            }
            // The child has its copy of the write end; ours must close for the reader to see EOF
            // (close(2) fails only for a descriptor that is not open, and this one is).
            try? output.fileHandleForWriting.close()
            thread.start()
        } catch {
            // The spawn's failure is the one to say; the pipe goes either way.
            try? output.fileHandleForWriting.close()
            try? output.fileHandleForReading.close()
            throw LaunchError.cannotStart(kind: kind, command: command, resolved: resolved.path, reason: error)
        }
    }

    /// Returns once the output pipe has closed, or after `limit` (a child of the program may keep it open).
    public func waitForOutputEnd(atMost limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in self.outputEnded.stream {} }
            group.addTask { await pause(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the process has ended, without blocking a thread.
    public func waitForExit() async {
        for await _ in exited.stream {}
    }

    /// The last lines the program printed, oldest first.
    public var lastOutputLines: [String] { outputLines.withLock { $0 } }

    /// `SIGSTOP`: the program stops where it is, as iOS suspends an app.
    public func suspend() { signal(SIGSTOP) }
    /// `SIGCONT`: a stopped program goes on.
    public func resume() { signal(SIGCONT) }

    /// `SIGTERM`: the program is asked to end.
    public func terminate() { signal(SIGTERM) }

    /// `SIGKILL`, followed by `SIGCONT` so that a stopped process dies at once.
    public func kill() {
        signal(SIGKILL)
        signal(SIGCONT)
    }

    /// `SIGKILL` to what is left of its process group once it has ended itself: programs it started
    /// that did not end with it. Nothing for a process without a group of its own.
    public func killProcessGroup() {
        guard leadsProcessGroup else { return }
        _ = Foundation.kill(-pid, SIGKILL)
        _ = Foundation.kill(-pid, SIGCONT)
        ProcessSpawning.forgetProcessGroup(pid)
    }

    /// Whether a process of its group is still running (not a zombie waiting to be reaped): the programs
    /// it started, once it has ended itself. False for a process without a group of its own.
    public var processGroupIsRunning: Bool {
        guard leadsProcessGroup else { return false }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard Int32(entry) != nil,
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After the command's name: state, parent, process group.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, fields[0] != "Z", Int32(fields[2]) == pid { return true }
        }
        return false
    }

    private func signal(_ number: Int32) {
        _ = Foundation.kill(leadsProcessGroup ? -pid : pid, number)
    }

    /// Where `executable` is: an absolute path as it is, a relative one from `directory`, a bare name on
    /// `PATH` (or `directory`'s when `PATH` has none). What launches an app, and what a replay checks first.
    public static func resolve(_ executable: String, in directory: URL) -> URL {
        if executable.hasPrefix("/") { return URL(fileURLWithPath: executable) }
        if executable.contains("/") { return directory.appendingPathComponent(executable) }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in searchPath.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(executable)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return directory.appendingPathComponent(executable)
    }
}

extension AppProcess {
    /// A process that could not be started, worded for the user.
    public enum LaunchError: Error, CustomStringConvertible {
        /// harness.yml gave the app or backend (its `kind`) an empty command.
        case emptyCommand(kind: String)
        /// The program, found at `resolved`, could not be started.
        case cannotStart(kind: String, command: [String], resolved: String, reason: any Error)

        public var description: String {
            switch self {
            case .emptyCommand(let kind):
                "the \(kind)'s command is empty"
            case .cannotStart(let kind, let command, let resolved, let reason):
                "the \(kind) command '\(command.joined(separator: " "))' cannot start (\(resolved)): \(reason)"
            }
        }
    }
}
