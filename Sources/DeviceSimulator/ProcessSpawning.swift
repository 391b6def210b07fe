import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How this process starts children without handing one child's descriptors to another.
///
/// Foundation's `Process.run()` on Linux gives a new child every descriptor it did not list to close,
/// and it makes that list before it spawns; the pipes callers make, and the socket pair through which
/// it learns that a child ended, are not close-on-exec. Two spawns on two threads at once (two scenarios
/// of a `--parallel` batch, a test's peers) could give one child the other's pipe ends and socket: the
/// other's exit would then go unseen, and its output would never end, until the first exited too. So
/// pipes are made close-on-exec (the child still gets its own ends, which `run()` duplicates onto 0, 1
/// and 2), and spawns run one at a time, each until `run()` has closed the parent's copies of the
/// child's ends.
public enum ProcessSpawning {
    private static let lock = NSLock()

    /// Runs `body`, which spawns, while no other spawn of this process runs.
    public static func serialized<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// A pipe whose two ends no child inherits unless it is given them as its standard streams.
    public static func pipe() -> Pipe {
        serialized {
            let pipe = Pipe()
            for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
            return pipe
        }
    }
}
