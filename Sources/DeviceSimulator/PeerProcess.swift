import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// Which process is on the other end of an app's socket (`SO_PEERCRED`), so the device can tell which
/// launch a connection belongs to before the app has said a word: an app that connects and sends
/// garbage, or nothing, is still the app that was launched. An app command may be a wrapper (`sh -c`,
/// an interpreter's launcher) whose child connects, so a launch owns its process and its descendants.
enum PeerProcess {
    /// The pid of the process that connected `channel`, if the platform says.
    static func pid(of channel: any Channel) async -> pid_t? {
        #if os(Linux)
        guard let provider = channel as? SocketOptionProvider else { return nil }
        let credentials: Credentials? = try? await provider.unsafeGetSocketOption(
            level: .socket, name: NIOBSDSocket.Option(rawValue: SO_PEERCRED)
        ).get()
        guard let pid = credentials?.pid, pid > 0 else { return nil }
        return pid
        #else
        return nil
        #endif
    }

    /// `struct ucred` (pid, uid, gid), which Swift's Glibc module leaves out.
    private struct Credentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// Whether `pid` is `ancestor` or runs under it (parents read from /proc, at most 64 levels up).
    static func isProcess(_ pid: pid_t, orDescendantOf ancestor: pid_t) -> Bool {
        var current = pid
        for _ in 0..<64 {
            if current == ancestor { return true }
            guard current > 1, let parent = parent(of: current) else { return false }
            current = parent
        }
        return false
    }

    /// The parent pid from `/proc/<pid>/stat`: the field after the command's closing parenthesis and
    /// the state letter (the command itself may hold spaces and parentheses).
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }
}
