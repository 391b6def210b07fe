import Foundation
import HarnessTimeline

#if canImport(Glibc)
import Glibc
#endif

/// How this process starts children without handing one child's descriptors to another.
///
/// Children are started with ``spawn(_:_:environment:directory:standardInput:standardOutput:standardError:onExit:)``
/// (posix_spawn), which gives a child only its three standard streams. Pipes are made close-on-exec all
/// the same, so that a child started some other way (a library's own) cannot hold another child's pipe
/// end open, and spawns still run one at a time.
public enum ProcessSpawning {
    private static let lock = NSLock()
    /// The process groups of children started with a group of their own that have not been killed yet.
    private static let groups = LockedState<Set<pid_t>>([])
    private static let killGroupsAtExit: Void = { atexit { ProcessSpawning.killEveryProcessGroup() } }()

    /// SIGKILL to every process group this process started and has not killed yet (see
    /// ``forgetProcessGroup(_:)``): children in a group of their own do not get the terminal's Ctrl-C,
    /// so a harness that exits without stopping them (a second Ctrl-C, a fatal error) ends them here.
    /// Called at `exit()` too.
    public static func killEveryProcessGroup() {
        for group in groups.withLock({ $0 }) {
            _ = kill(-group, SIGKILL)
            _ = kill(-group, SIGCONT)
        }
    }

    /// The group is gone (killed, or every process in it has ended): ``killEveryProcessGroup()`` leaves it.
    public static func forgetProcessGroup(_ group: pid_t) {
        _ = groups.withLock { $0.remove(group) }
    }

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

    /// A child that could not be started.
    public enum SpawnError: Error, CustomStringConvertible {
        /// The child's standard stream `target` could not be given it (`errno`).
        case descriptor(executable: String, target: Int32, errno: Int32)
        /// The working directory could not be set for the child.
        case workingDirectory(executable: String, directory: String)
        /// posix_spawn refused (`errno`): no such program, not executable, …
        case start(executable: String, errno: Int32)

        public var description: String {
            switch self {
            case .descriptor(let executable, let target, let errno):
                "cannot give \(executable) descriptor \(target): \(String(cString: strerror(errno)))"
            case .workingDirectory(let executable, let directory):
                "cannot set the working directory \(directory) for \(executable)"
            case .start(let executable, let errno):
                "cannot start \(executable): \(String(cString: strerror(errno)))"
            }
        }
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
    /// reaped. The caller closes its own copies of the child's ends. A descriptor below 0 stands for
    /// /dev/null. A bare program name is looked up on this process's PATH, not on `environment`'s.
    /// With `newProcessGroup`, the child leads a process group of its own (its id is the child's), which
    /// its own children join: one signal to the group reaches them all, and the terminal's Ctrl-C does not.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: URL? = nil,
        standardInput: Int32, standardOutput: Int32, standardError: Int32, newProcessGroup: Bool = false,
        onExit: @escaping @Sendable (Termination) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // A negative descriptor (FileHandle.nullDevice's is -1) means /dev/null.
        for (source, target) in [(standardInput, Int32(0)), (standardOutput, 1), (standardError, 2)] {
            let added =
                source < 0
                ? posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
                : posix_spawn_file_actions_adddup2(&actions, source, target)
            guard added == 0 else {
                throw SpawnError.descriptor(executable: executable, target: target, errno: added)
            }
        }
        if let directory {
            guard let chdir = GNUSpawn.addChdir, chdir(&actions, directory.path) == 0 else {
                throw SpawnError.workingDirectory(executable: executable, directory: directory.path)
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
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

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
            throw SpawnError.start(executable: executable, errno: result)
        }
        let child = pid
        if newProcessGroup {
            _ = killGroupsAtExit
            _ = groups.withLock { $0.insert(child) }
        }
        let waiter = Thread {
            var status: Int32 = 0
            var reaped = waitpid(child, &status, 0)
            while reaped < 0, errno == EINTR { reaped = waitpid(child, &status, 0) }
            // Reaped by someone else (nothing here does that): the ending is unknown, not a clean exit.
            guard reaped == child else { return onExit(Termination(status: -1, signal: nil)) }
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
