import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A body file of a cassette, open for reading, its bytes checked against the SHA-256 that names it
/// (``Cassette/openBody(of:)``). The file closes when this is released.
public final class BodyFile: Sendable {
    /// Where it is, for messages.
    public let url: URL
    /// Open for reading until this is released; read with `pread` (``read(into:at:)``), which moves no
    /// shared offset, so readers on several threads do not disturb one another.
    public let descriptor: CInt
    /// Its size when it was opened: the recorded body's.
    public let size: Int

    init(url: URL, descriptor: CInt, size: Int) {
        self.url = url
        self.descriptor = descriptor
        self.size = size
    }

    deinit { close(descriptor) }

    /// Reads up to `buffer.count` bytes from `offset` into `buffer`, fewer only at the end of the file;
    /// returns how many. Blocking: call it off the cooperative pool and the event loops.
    ///
    /// - Throws: ``CassetteError`` naming the file when it cannot be read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        var done = 0
        while done < buffer.count, let start = buffer.baseAddress {
            let read = pread(descriptor, start + done, buffer.count - done, off_t(offset + done))
            if read < 0 {
                let error = errno
                if error == EINTR { continue }
                throw CassetteError(file: url.path, problem: "cannot be read (\(String(cString: strerror(error))))")
            }
            if read == 0 { break }
            done += read
        }
        return done
    }

    /// The hex SHA-256 of the file's bytes, read a mebibyte at a time: memory stays the same whatever
    /// the body's size.
    func sha256() throws -> String {
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while true {
            let count = try read(into: buffer, at: offset)
            guard count > 0 else { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
            offset += count
        }
        return BodyStore.hex(hasher.finalize())
    }
}
