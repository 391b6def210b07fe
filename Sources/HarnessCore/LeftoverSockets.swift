import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The device sockets runs leave in the temporary directory when they die without closing
/// (`harness-<pid>-<n>.sock`): a crash or a SIGKILL skips the clean-up. A run removes those whose
/// process is gone before it makes its own.
enum LeftoverSockets {
    static let prefix = "harness-"
    static let suffix = ".sock"

    /// The socket path for a run of this process.
    static func path(in directory: URL) -> String {
        directory.appendingPathComponent("\(prefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))\(suffix)").path
    }

    /// The process a socket name belongs to, if it is one of ours.
    static func owner(ofName name: String) -> pid_t? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let parts = name.dropFirst(prefix.count).dropLast(suffix.count).split(separator: "-")
        guard parts.count == 2, UInt32(parts[1]) != nil, let pid = pid_t(parts[0]), pid > 0 else { return nil }
        return pid
    }

    /// Removes the sockets in `directory` whose process no longer exists; returns their names.
    @discardableResult
    static func removeDead(in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed: [String] = []
        for name in names {
            guard let pid = owner(ofName: name), kill(pid, 0) == -1, errno == ESRCH else { continue }
            var info = stat()
            let path = directory.appendingPathComponent(name).path
            // Only sockets: a file that merely looks like one is not ours to delete.
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
    }
}
