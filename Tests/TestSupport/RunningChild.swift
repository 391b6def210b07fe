import Foundation
import Processes

/// A child process a test talks to while it runs: waits for lines it prints, sends it signals, and
/// collects its exit status. For long-running commands (`harness serve`, a run to interrupt).
public final class RunningChild: @unchecked Sendable {
    /// The child's process id.
    public let pid: Int32
    private let running = Flag()
    /// Set until the output pipe has closed: a line can still come while it is set.
    private let outputOpen = Flag()
    private let lock = NSLock()
    private var lines: [String] = []
    private var waiters: [(String, CheckedContinuation<String?, Never>)] = []
    private var pending = Data()
    private let exit = AsyncStream.makeStream(of: Int32.self)

    /// A test that fails early must not leave the child (and its ports) behind.
    deinit {
        if isRunning { kill(pid, SIGKILL) }
    }

    /// - Parameter environment: variables set for the child on top of this process's own.
    public init(
        _ executable: String, _ arguments: [String], currentDirectory: URL? = nil, environment: [String: String] = [:]
    ) throws {
        let continuation = exit.continuation
        // A pipe no other child inherits (see ProcessSpawning).
        let pipe = ProcessSpawning.pipe()
        let running = self.running
        pid = try ProcessSpawning.spawn(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            directory: currentDirectory, standardInput: FileHandle.nullDevice.fileDescriptor,
            standardOutput: pipe.fileHandleForWriting.fileDescriptor,
            standardError: pipe.fileHandleForWriting.fileDescriptor
        ) { ending in
            running.clear()
            continuation.yield(ending.status)
            continuation.finish()
        }
        try? pipe.fileHandleForWriting.close()
        let reader = pipe.fileHandleForReading
        // Blocking reads on a thread of its own: readabilityHandler can crash libdispatch on Linux when
        // the pipe closes under it.
        let thread = Thread { [weak self] in
            while true {
                let data = reader.availableData
                self?.append(data)
                if data.isEmpty { break }
            }
        }
        thread.start()
    }

    /// Everything printed so far.
    public var output: String { lock.withLock { lines.joined(separator: "\n") } }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { running.isSet }

    /// Waits for a line containing `text`; nil if the process ended or `timeout` passed first.
    public func waitForLine(containing text: String, timeout: Duration = .seconds(60)) async -> String? {
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.resolve(nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            lock.withLock {
                if let line = lines.first(where: { $0.contains(text) }) {
                    continuation.resume(returning: line)
                } else if !outputOpen.isSet {
                    continuation.resume(returning: nil)
                } else {
                    waiters.append((text, continuation))
                }
            }
        }
    }

    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the process to end and returns its status.
    public func waitForExit() async -> Int32 {
        let status = await exit.stream.first { _ in true } ?? -1
        resolve(nil)
        return status
    }

    private func append(_ data: Data) {
        var complete: [String] = []
        lock.withLock {
            pending.append(data)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                complete.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
            lines.append(contentsOf: complete)
        }
        for line in complete { resolve(line) }
        if data.isEmpty {
            outputOpen.clear()
            resolve(nil)
        }
    }

    /// Hands `line` to the waiters looking for it; with nil, ends every wait (output over, or timeout).
    private func resolve(_ line: String?) {
        let ready: [CheckedContinuation<String?, Never>] = lock.withLock {
            var ready: [CheckedContinuation<String?, Never>] = []
            waiters.removeAll { text, continuation in
                guard line == nil || line!.contains(text) else { return false }
                ready.append(continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: line) }
    }
}

/// A flag that starts set and is cleared once, read from any thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = true
    var isSet: Bool { lock.withLock { value } }
    func clear() { lock.withLock { value = false } }
}
