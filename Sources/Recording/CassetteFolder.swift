import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A cassette's own files, reached from its folder without following a symbolic link anywhere below
/// it, so that every name the cassette holds (`traffic.har`, `bodies/<sha256>`, …) resolves inside it.
///
/// A link is refused, naming its path, wherever it points: a cassette is copied, shared and served, and
/// a link in it would have the harness serve or export whatever file it names. Each step of a name is
/// opened with `O_NOFOLLOW` from the folder before it (`openat`), and looked at with `lstat`'s
/// `fstatat`, never resolved. The cassette's folder itself may be a link: its path is the user's.
struct CassetteFolder: Sendable {
    let url: URL

    /// What a name in the folder is.
    enum Kind: Equatable {
        case file(size: Int)
        case folder
    }

    /// What `name` (`/`-separated, relative to the folder) is; nil when it does not exist.
    ///
    /// - Throws: ``CassetteError`` naming the path when it, or a folder on the way, is a symbolic link,
    ///   or something other than a regular file or a folder.
    func kind(of name: String) throws -> Kind? {
        guard let opened = try openParent(of: name) else { return nil }
        let (parent, last) = opened
        defer { close(parent) }
        var info = stat()
        guard fstatat(parent, last, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            let error = errno
            if error == ENOENT { return nil }
            throw Self.unreadable(path(name), error)
        }
        return try Self.kind(info, path: path(name))
    }

    /// The size of `name`, a regular file reached through no link; nil when it does not exist.
    ///
    /// - Throws: ``CassetteError`` naming the path when it is a link or a folder.
    func file(_ name: String) throws -> Int? {
        switch try kind(of: name) {
        case nil: return nil
        case .file(let size)?: return size
        case .folder?: throw CassetteError(file: path(name), problem: "is a folder, not a file")
        }
    }

    /// `name` opened for reading: a regular file, reached through no link. Nil when it does not exist.
    /// The caller closes the descriptor.
    ///
    /// - Throws: ``CassetteError`` naming the path when it, or a folder on the way, is a symbolic link,
    ///   is not a regular file, or cannot be opened.
    func open(_ name: String) throws -> CInt? {
        guard let opened = try openParent(of: name) else { return nil }
        let (parent, last) = opened
        defer { close(parent) }
        // O_NONBLOCK: a FIFO put in a cassette must not hang the open; it is refused below.
        let descriptor = openat(parent, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return nil }
            try Self.refuseLink(last, in: parent, path: path(name))
            throw Self.unreadable(path(name), error)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = errno
            close(descriptor)
            throw Self.unreadable(path(name), error)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CassetteError(file: path(name), problem: "is not a regular file")
        }
        return descriptor
    }

    /// The bytes of `name`, a regular file reached through no link; nil when it does not exist.
    ///
    /// - Throws: ``CassetteError`` naming the path when it is a link, is larger than `limit`, or cannot
    ///   be read.
    func read(_ name: String, atMost limit: Int) throws -> Data? {
        guard let descriptor = try open(name) else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        if fstat(descriptor, &info) == 0, Int(info.st_size) > limit {
            throw CassetteError(file: path(name), problem: "is \(info.st_size) bytes; at most \(limit) are read")
        }
        do {
            let data = try handle.readToEnd() ?? Data()
            guard data.count <= limit else {
                throw CassetteError(file: path(name), problem: "is more than \(limit) bytes; at most \(limit) are read")
            }
            return data
        } catch let error as CassetteError {
            throw error
        } catch {
            throw CassetteError(file: path(name), problem: "cannot be read (\(error.localizedDescription))")
        }
    }

    /// The full path of `name`, for messages.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The folder holding `name`'s last part, opened (the caller closes it), and that part. Nil when a
    /// folder on the way does not exist.
    private func openParent(of name: String) throws -> (CInt, String)? {
        let parts = name.split(separator: "/").map(String.init)
        guard let last = parts.last, !parts.contains(where: { $0 == "." || $0 == ".." }) else {
            throw CassetteError(file: path(name), problem: "is not a name inside the cassette")
        }
        var folder = Glibc.open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            let error = errno
            if error == ENOENT { return nil }
            throw Self.unreadable(url.path, error)
        }
        var walked: [String] = []
        for part in parts.dropLast() {
            walked.append(part)
            let next = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                let error = errno
                defer { close(folder) }
                if error == ENOENT { return nil }
                let here = path(walked.joined(separator: "/"))
                try Self.refuseLink(part, in: folder, path: here)
                throw error == ENOTDIR
                    ? CassetteError(file: here, problem: "is not a folder") : Self.unreadable(here, error)
            }
            close(folder)
            folder = next
        }
        return (folder, last)
    }

    /// Throws when `name` in the open folder `parent` is a symbolic link.
    private static func refuseLink(_ name: String, in parent: CInt, path: String) throws {
        var info = stat()
        if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK {
            throw CassetteError.symbolicLink(path)
        }
    }

    private static func kind(_ info: stat, path: String) throws -> Kind {
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file(size: Int(info.st_size))
        case S_IFDIR: return .folder
        case S_IFLNK: throw CassetteError.symbolicLink(path)
        default: throw CassetteError(file: path, problem: "is neither a regular file nor a folder")
        }
    }

    private static func unreadable(_ path: String, _ error: Int32) -> CassetteError {
        CassetteError(file: path, problem: "cannot be read (\(String(cString: strerror(error))))")
    }
}
