import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One self-contained HAR from a cassette: every body that lives in `bodies/` put inline, as base64, so
/// the file alone can be handed to a HAR viewer or another tool, and read back by the harness.
///
/// The file is written as it is read: each body goes from its file to the output in chunks of
/// ``chunkSize`` bytes, so memory holds the HAR without its stored bodies and one chunk, whatever the
/// bodies' sizes. What would be more than ``HARReader`` reads (a body over 64 MiB, a document over
/// 1 GiB) is refused before anything is read or written (``HARExportPlan``).
public enum HARExport {
    /// The bytes of a body read, hashed and encoded at a time: a multiple of 3, so that each chunk's
    /// base64 follows on from the one before.
    static let chunkSize = 3 << 18

    /// Writes the cassette's traffic to `output` with every body inline; returns how many entries.
    /// `output` appears whole or not at all: the file is written beside it and renamed into place.
    ///
    /// - Throws: ``CassetteError`` when a body is too large to read back inline (`.tooLargeToExport`,
    ///   before anything is read), a body file is a link or does not hash to its name (before its bytes
    ///   are written), or the output cannot be written. Nothing is left at `output` or beside it.
    @discardableResult
    public static func selfContained(_ cassette: Cassette, to output: URL) throws -> Int {
        var bodyFiles: [Int: Int] = [:]
        for index in cassette.har.log.entries.indices {
            if case .file(_, let size) = cassette.body(of: index) { bodyFiles[index] = size }
        }
        let plan = try HARExportPlan.make(cassette.har, bodyFiles: bodyFiles, harFile: cassette.harURL.path)
        try write(plan, from: cassette, to: output)
        return cassette.har.log.entries.count
    }

    private static func write(_ plan: HARExportPlan, from cassette: Cassette, to output: URL) throws {
        let partial = output.deletingLastPathComponent().appendingPathComponent(
            ".\(output.lastPathComponent).export-\(UUID().uuidString.prefix(8))")
        let descriptor = open(partial.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CassetteError(
                file: output.path, problem: "cannot be written (\(String(cString: strerror(errno))))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            for piece in plan.pieces {
                switch piece {
                case .json(let data):
                    try handle.write(contentsOf: data)
                case .body(let index, let size):
                    try writeBody(of: index, size: size, from: cassette, to: handle)
                }
            }
            try handle.close()
            guard rename(partial.path, output.path) == 0 else {
                throw CassetteError(
                    file: output.path, problem: "cannot be written (\(String(cString: strerror(errno))))")
            }
        } catch {
            // Closed above already, or failing to: the partial file is removed either way.
            try? handle.close()
            unlink(partial.path)
            if let error = error as? CassetteError { throw error }
            throw CassetteError(file: output.path, problem: "cannot be written (\(error.localizedDescription))")
        }
    }

    /// Entry `index`'s body, `size` bytes, as base64: checked against its digest before its first byte
    /// goes out, and hashed again as it is copied, so that what was written is what was checked.
    private static func writeBody(of index: Int, size: Int, from cassette: Cassette, to handle: FileHandle) throws {
        guard let file = try cassette.openBody(of: index) else { return }
        let named = file.url.lastPathComponent
        var hasher = SHA256()
        var chunk = Data(count: chunkSize)
        var offset = 0
        while offset < size {
            let wanted = min(chunkSize, size - offset)
            let read = try chunk.withUnsafeMutableBytes { buffer in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset)
            }
            guard read == wanted else {
                throw CassetteError(
                    file: file.url.path, problem: "came to an end at byte \(offset + read), not at the \(size) recorded"
                )
            }
            let bytes = chunk.prefix(wanted)
            bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            try handle.write(contentsOf: bytes.base64EncodedData())
            offset += wanted
        }
        let actual = BodyStore.hex(hasher.finalize())
        guard actual == named else { throw CassetteError.digestMismatch(file.url.path, named: named, actual: actual) }
    }
}
