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
