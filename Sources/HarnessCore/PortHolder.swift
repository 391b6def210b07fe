import Foundation

/// Which process listens on a TCP port, where Linux lets this one know: the listening socket's inode
/// from `/proc/net/tcp` and `tcp6`, then the process holding it among `/proc/<pid>/fd` (another user's
/// processes are hidden unless the harness runs as root). For a message, at the moment a port is found
/// taken; nil when it cannot be known.
public struct PortHolder: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    /// Its name, from `/proc/<pid>/comm`.
    public var command: String

    public var description: String { "process \(pid), \(command)" }

    /// The inodes of the sockets listening on `port` in the text of `/proc/net/tcp` (or `tcp6`).
    static func listeningInodes(port: Int, in table: String) -> Set<String> {
        var inodes: Set<String> = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode
            guard fields.count >= 10, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port, fields[9] != "0"
            else { continue }
            inodes.insert(String(fields[9]))
        }
        return inodes
    }

    /// The process listening on `port` on this machine, when it can be known.
    public static func of(port: Int) -> PortHolder? {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            inodes.formUnion(listeningInodes(port: port, in: text))
        }
        guard !inodes.isEmpty else { return nil }
        let sockets = Set(inodes.map { "socket:[\($0)]" })
        let manager = FileManager.default
        for entry in (try? manager.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry) else { continue }
            let folder = "/proc/\(entry)/fd"
            for descriptor in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] {
                guard let target = try? manager.destinationOfSymbolicLink(atPath: "\(folder)/\(descriptor)"),
                    sockets.contains(target)
                else { continue }
                let command = procFile("/proc/\(entry)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
                return PortHolder(pid: pid, command: command)
            }
        }
        return nil
    }

    /// A /proc file's text, read to its end: /proc says its files have no size, so they are read until
    /// the kernel has no more to give (a busy machine's socket table is many pages), at most 16 MiB.
    static func procFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var data = Data()
        while data.count < 16 << 20, let chunk = try? handle.read(upToCount: 65_536), !chunk.isEmpty {
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
