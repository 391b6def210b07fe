import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The system calls around ``ProcessLineage``: the process table read from `/proc`, a process's
/// environment, this process made the reaper of its descendants' orphans, and those orphans reaped. Linux
/// only; elsewhere the table is empty and a backend's processes are those of its process group.
enum ProcessTable {
    /// Every process `/proc` lists now. Processes come and go while it is read: one that ended between
    /// the listing and its read is left out.
    static func snapshot() -> [ProcessRecord] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry in
            guard Int32(entry) != nil, let bytes = contents(of: "/proc/\(entry)/stat") else { return nil }
            return ProcessRecord(stat: String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Whether the environment `pid` started with holds `entry`. False when it cannot be read: another
    /// user's process, or a zombie (its memory is gone).
    static func environment(of pid: Int32, carries entry: String) -> Bool {
        guard let bytes = contents(of: "/proc/\(pid)/environ") else { return false }
        return ProcessRecord.environment(bytes, carries: entry)
    }

    /// Makes this process the parent of every orphan among its descendants, in place of init
    /// (`PR_SET_CHILD_SUBREAPER`): a backend's process whose parent ended stays below the harness, where
    /// a stop finds and reaps it. Done once a process (children do not inherit it); false where the
    /// system refuses it or has no such call.
    static let isSubreaper: Bool = {
        #if os(Linux)
        // prctl is variadic, which Swift does not import: it is called through its address, with the four
        // unsigned longs it reads.
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") else { return false }
        let setOption = unsafeBitCast(address, to: Prctl.self)
        let childSubreaper: Int32 = 36  // PR_SET_CHILD_SUBREAPER, linux/prctl.h
        return setOption(childSubreaper, 1, 0, 0, 0) == 0
        #else
        return false
        #endif
    }()

    /// Reaps each of `pids`, ended children of this process that nothing else waits for, without
    /// blocking; true when every one was reaped.
    static func reap(_ pids: [Int32]) -> Bool {
        var all = true
        for pid in pids {
            var status: Int32 = 0
            var reaped = waitpid(pid, &status, WNOHANG)
            while reaped < 0, errno == EINTR { reaped = waitpid(pid, &status, WNOHANG) }
            if reaped != pid { all = false }
        }
        return all
    }

    /// SIGKILL, then SIGCONT so that a stopped process dies at once, to each of `pids`.
    static func kill(_ pids: [Int32]) {
        signal(pids, SIGKILL)
        signal(pids, SIGCONT)
    }

    /// `number` to each of `pids`.
    static func signal(_ pids: [Int32], _ number: Int32) {
        for pid in pids { _ = Foundation.kill(pid, number) }
    }

    /// Runs `body` (reads of `/proc`, which take the read process's locks) on NIO's blocking pool, not
    /// on Swift's cooperative threads.
    static func offThePool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        if let value = try? await NIOThreadPool.singleton.runIfActive(body) { return value }
        return body()
    }

    /// A whole file, read with plain system calls (a `/proc` file has no size to ask for); nil when it
    /// cannot be opened or read.
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }
}
