import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Cassette {
    /// Entry `index`'s body file, opened inside the cassette (through no symbolic link) and checked
    /// against the SHA-256 that names it; nil for a body inline in the HAR. What is served or exported is
    /// read from the descriptor this returns, the file that was checked.
    ///
    /// The first call for a file reads it whole to hash it (a mebibyte at a time), as does a call after
    /// the file was replaced or rewritten (``CheckedBodies``); other calls read nothing. Blocking: call it
    /// off the cooperative pool and the event loops.
    ///
    /// - Throws: ``CassetteError`` naming the body file: it is missing, is a symbolic link (or
    ///   `bodies/` is), no longer has the recorded size, or its bytes do not hash to its name (both
    ///   digests named).
    public func openBody(of index: Int) throws -> BodyFile? {
        let entry = har.log.entries[index]
        guard let name = entry.response.content.file else { return nil }
        let path = folder.path(name)
        guard let descriptor = try folder.open(name) else {
            throw CassetteError(
                file: path, problem: "is missing: the body of entry \(index) is gone since the cassette was opened")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = errno
            close(descriptor)
            throw CassetteError(file: path, problem: "cannot be read (\(String(cString: strerror(error))))")
        }
        // From here the file closes when `file` is released, a throw included.
        let file = BodyFile(url: URL(fileURLWithPath: path), descriptor: descriptor, size: Int(info.st_size))
        guard file.size == entry.response.bodySize else {
            throw CassetteError(
                file: path, problem: "has \(file.size) bytes, not the \(entry.response.bodySize) recorded")
        }
        let identity = FileIdentity(info)
        // One check a body at a time: requests that come for it meanwhile wait for that check, instead
        // of each reading a large body whole again.
        return try checkedBodies.checking(name) {
            if checkedBodies.contains(name, as: identity) { return file }
            let named = String(name.dropFirst("bodies/".count))
            let actual = try file.sha256()
            guard actual == named else { throw CassetteError.digestMismatch(path, named: named, actual: actual) }
            checkedBodies.insert(name, as: identity)
            return file
        }
    }
}
