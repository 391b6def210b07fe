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

extension ProcessSpawning {
    /// How a child ended: its exit status, or the signal that ended it (then `status` is the signal too,
    /// as Foundation's `Process` reports it).
    public struct Termination: Sendable, Equatable {
        public var status: Int32
        public var signal: Int32?

        public init(status: Int32, signal: Int32?) {
            self.status = status
            self.signal = signal
        }
    }

    /// A child that could not be started, in words.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts `executable` (a path, or a name looked up on PATH) with `posix_spawn`, not Foundation's
    /// `Process.run()`. Before each spawn, `Process.run()` in Swift 6.3 lists the open descriptors
    /// through `/proc/self/fd` and copies 256 bytes of each directory entry whatever its length; past
    /// about 1,350 open descriptors that read can run off the end of the directory buffer and crash the
    /// process (swift-corelibs-foundation PR 5472, fixed after 6.3). The harness and its tests have that
    /// many (connections, SQLite files, pipes).
    ///
    /// The child gets `standardInput`, `standardOutput` and `standardError` as 0, 1 and 2 and no other
    /// descriptor, `environment` as its whole environment, no blocked signals and every signal's
    /// default action (the harness ignores SIGTERM and SIGINT for its ServiceGroup, and a child would
    /// keep ignoring them). `onExit` runs on a thread of its own once the child has ended and been
    /// reaped. The caller closes its own copies of the child's ends.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: URL? = nil,
        standardInput: Int32, standardOutput: Int32, standardError: Int32,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        if let directory {
            guard let chdir = GNUSpawn.addChdir, chdir(&actions, directory.path) == 0 else {
                throw SpawnError(description: "cannot set the working directory \(directory.path) for \(executable)")
            }
        }
        if let closeFrom = GNUSpawn.addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var every = sigset_t()
        sigfillset(&every)
        posix_spawnattr_setsigdefault(&attributes, &every)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let result = serialized {
            executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
                : posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        }
        guard result == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        let child = pid
        let waiter = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            let signal = status & 0x7F
            onExit(
                signal == 0
                    ? Termination(status: (status >> 8) & 0xFF, signal: nil)
                    : Termination(status: signal, signal: signal))
        }
        waiter.name = "child-\(child)"
        waiter.start()
        return pid
    }
}

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29) and `…_addclosefrom_np` (2.34), which Swift's
/// Glibc module does not declare: found by name at run time.
private enum GNUSpawn {
    typealias AddChdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    static let addChdir: AddChdir? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np"
    )
    .map { unsafeBitCast($0, to: AddChdir.self) }
    static let addCloseFrom: AddCloseFrom? = dlsym(
        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"
    ).map { unsafeBitCast($0, to: AddCloseFrom.self) }
}
