import Foundation
import Processes
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Children started with posix_spawn: they get the pipe ends they are given as their standard streams
/// and no other descriptor, their environment and folder, every signal's default action, and their end.
@Suite struct ProcessSpawningTests {
    @Test func bothEndsOfAPipeAreCloseOnExec() {
        let pipe = ProcessSpawning.pipe()
        for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
            #expect(fcntl(handle.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
        }
    }

    /// Runs `script` with sh and returns what it printed and how it ended.
    func run(_ script: String, environment: [String: String] = [:], directory: URL? = nil) throws -> (
        String, ProcessSpawning.Termination
    ) {
        let pipe = ProcessSpawning.pipe()
        let ended = DispatchSemaphore(value: 0)
        let termination = LockedTermination()
        _ = try ProcessSpawning.spawn(
            "sh", ["-c", script], environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 },
            directory: directory, standardInput: FileHandle.nullDevice.fileDescriptor,
            standardOutput: pipe.fileHandleForWriting.fileDescriptor,
            standardError: pipe.fileHandleForWriting.fileDescriptor
        ) { ending in
            termination.set(ending)
            ended.signal()
        }
        try pipe.fileHandleForWriting.close()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        ended.wait()
        return (String(decoding: output, as: UTF8.self), try #require(termination.value))
    }

    @Test func theChildGetsItsStreamsEnvironmentAndFolderAndNoOtherDescriptor() throws {
        let folder = FileManager.default.temporaryDirectory
        // A descriptor of ours that is not close-on-exec: the child must not have it.
        let open = Glibc.open("/dev/null", O_RDONLY)
        defer { close(open) }
        let (output, termination) = try run(
            "echo $GREETING; pwd; readlink /proc/self/fd/0; ls /proc/self/fd | wc -l",
            environment: ["GREETING": "hello"],
            directory: folder)
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == "hello")
        #expect(lines.dropFirst().first == folder.resolvingSymlinksInPath().path)
        #expect(lines.dropFirst(2).first == "/dev/null", "FileHandle.nullDevice stands for /dev/null: \(output)")
        // 0, 1, 2 and ls's own directory descriptor.
        #expect(lines.last == "4", "\(output)")
        #expect(termination == ProcessSpawning.Termination(status: 0, signal: nil))
    }

    @Test func theExitStatusAndTheEndingSignalAreReported() throws {
        #expect(try run("exit 3").1 == ProcessSpawning.Termination(status: 3, signal: nil))
        #expect(try run("kill -TERM $$").1 == ProcessSpawning.Termination(status: 15, signal: 15))
    }

    /// This process ignores SIGTERM while a ServiceGroup waits for it; the child gets the default action.
    @Test func theChildGetsDefaultSignalActionsAndNoBlockedSignals() throws {
        let previous = signal(SIGTERM, SIG_IGN)
        defer { signal(SIGTERM, previous) }
        let (output, termination) = try run("grep -E '^Sig(Blk|Ign)' /proc/self/status; kill -TERM $$; echo survived")
        #expect(output.contains("SigBlk:\t0000000000000000"), "\(output)")
        #expect(!output.contains("survived"), "\(output)")
        #expect(termination.signal == SIGTERM)
    }

    @Test func aMissingProgramIsAnErrorNotACrash() {
        #expect(throws: ProcessSpawning.SpawnError.self) {
            _ = try run("true", directory: URL(fileURLWithPath: "/nonexistent/folder"))
        }
        let null = FileHandle.nullDevice.fileDescriptor
        #expect(throws: ProcessSpawning.SpawnError.self) {
            _ = try ProcessSpawning.spawn(
                "/nonexistent/program", [], environment: [:], standardInput: null, standardOutput: null,
                standardError: null
            ) { _ in }
        }
    }
}

private final class LockedTermination: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: ProcessSpawning.Termination?
    var value: ProcessSpawning.Termination? { lock.withLock { stored } }
    func set(_ termination: ProcessSpawning.Termination) { lock.withLock { stored = termination } }
}
