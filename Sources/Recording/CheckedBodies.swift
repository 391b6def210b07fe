import Foundation
import HarnessTimeline

#if canImport(Glibc)
import Glibc
#endif

/// The body files a cassette has checked against their digests, each with the identity of the file it
/// checked, so that a body served again and again is read whole only once, and a file replaced or
/// rewritten since its check (another inode, size, modification or change time) is checked again.
final class CheckedBodies: Sendable {
    private let checked = LockedState<[String: FileIdentity]>([:])
    /// A lock for each body being checked, so that one body is read for its check at a time.
    private let locks = LockedState<[String: NSLock]>([:])

    /// Runs `check` for the body `name` while no other check of it runs (on the blocking pool's threads:
    /// a second request for a body being hashed waits for that hash, then finds it checked).
    func checking<T>(_ name: String, _ check: () throws -> T) throws -> T {
        let lock = locks.withLock { locks in
            if let lock = locks[name] { return lock }
            let lock = NSLock()
            locks[name] = lock
            return lock
        }
        lock.lock()
        defer { lock.unlock() }
        return try check()
    }

    /// Whether `name` was checked as the file `identity` is now.
    func contains(_ name: String, as identity: FileIdentity) -> Bool {
        checked.withLock { $0[name] == identity }
    }

    func insert(_ name: String, as identity: FileIdentity) {
        checked.withLock { $0[name] = identity }
    }
}

/// What tells one state of a file from another without reading it: which file (device and inode), its
/// size, and when its bytes (modification) and its inode (change, which no user can set back) last changed.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modified: [Int]
    var changed: [Int]

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int(info.st_size)
        modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        changed = [Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec)]
    }
}
