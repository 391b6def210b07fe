import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Where a response's body bytes come from: the file on disk today, a recorded body tomorrow. The
/// sender asks for its bytes in order, a chunk at a time; the source lets go of what it holds when it
/// is released.
protocol BodySource: AnyObject {
    /// Up to `count` bytes from `offset` (fewer only at the end of the source). `end` is where the
    /// bytes the response wants from this stretch stop: the source may read ahead up to it, no further.
    func read(from offset: Int, count: Int, end: Int) async throws -> ByteBuffer
}

/// A file, read on NIO's blocking-I/O threads (never on the cooperative pool) up to a mebibyte at a
/// time, and handed out in slices of that read without copying. Used by one response at a time.
final class FileBodySource: BodySource, @unchecked Sendable {
    static let readAhead = 1 << 20
    private let descriptor: CInt
    /// The last read, and the file offset of its first byte.
    private var window = ByteBuffer()
    private var windowStart = 0

    private init(descriptor: CInt) { self.descriptor = descriptor }

    deinit { Glibc.close(descriptor) }

    static func open(_ url: URL) async throws -> FileBodySource {
        let path = url.path
        let descriptor = try await NIOThreadPool.singleton.runIfActive {
            let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw IOError(errnoCode: errno, reason: "open") }
            return descriptor
        }
        return FileBodySource(descriptor: descriptor)
    }

    func read(from offset: Int, count: Int, end: Int) async throws -> ByteBuffer {
        if offset < windowStart || offset >= windowStart + window.readableBytes {
            window = try await pread(at: offset, length: max(count, min(Self.readAhead, end - offset)))
            windowStart = offset
        }
        let skip = offset - windowStart
        return window.getSlice(at: window.readerIndex + skip, length: min(count, window.readableBytes - skip))
            ?? ByteBuffer()
    }

    /// Up to `length` bytes at `offset`; fewer only at the end of the file.
    private func pread(at offset: Int, length: Int) async throws -> ByteBuffer {
        let descriptor = descriptor
        return try await NIOThreadPool.singleton.runIfActive {
            try Self.pread(descriptor, at: offset, length: length, allocator: ByteBufferAllocator())
        }
    }

    /// Up to `length` bytes of the open file at `offset`, fewer only at its end; blocking, so on an I/O
    /// thread (or for a small file, on the event loop: ``QuickResponder``).
    static func pread(_ descriptor: CInt, at offset: Int, length: Int, allocator: ByteBufferAllocator) throws
        -> ByteBuffer
    {
        var buffer = allocator.buffer(capacity: length)
        var done = 0
        var atEnd = false
        while done < length, !atEnd {
            var interrupted = false
            let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: length - done) { bytes in
                let read = Glibc.pread(descriptor, bytes.baseAddress, length - done, off_t(offset + done))
                guard read >= 0 else {
                    guard errno == EINTR else { throw IOError(errnoCode: errno, reason: "pread") }
                    interrupted = true
                    return 0
                }
                return read
            }
            atEnd = read == 0 && !interrupted
            done += read
        }
        return buffer
    }
}
