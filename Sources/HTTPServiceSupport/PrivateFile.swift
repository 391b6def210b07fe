import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes secrets (the `.p8` provider key, issued certificates' keys, the endpoints file with Parse's
/// master key) readable by their owner only: a
/// new file created `0600` from its first byte (never through a link someone left at its name), then
/// renamed over the old one, so a reader sees the old key or the new one, never half of it.
public enum PrivateFile {
    public static func write(_ text: String, to url: URL) throws { try write(Data(text.utf8), to: url) }

    public static func write(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max))")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw error("open", temporary) }
        do {
            defer { close(descriptor) }
            try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: data)
        } catch {
            unlink(temporary.path)
            throw error
        }
        guard rename(temporary.path, url.path) == 0 else {
            let failure = error("rename", url)
            unlink(temporary.path)
            throw failure
        }
    }

    private static func error(_ call: String, _ url: URL) -> CocoaError {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [
                NSFilePathErrorKey: url.path,
                NSLocalizedDescriptionKey: "\(call) failed: \(String(cString: strerror(errno)))",
            ])
    }
}
