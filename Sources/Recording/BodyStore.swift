import Crypto
import Foundation

/// The cassette's `bodies/` folder: each large body once, named by the SHA-256 of its bytes.
public struct BodyStore: Sendable {
    public let directory: URL

    public init(cassette: URL) { directory = cassette.appendingPathComponent("bodies") }

    /// Bodies up to this size stay inline in the HAR; larger ones go beside it.
    public static let inlineLimit = 64 * 1024

    public func url(of digest: String) -> URL { directory.appendingPathComponent(digest) }

    static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Whether `name` is `bodies/<sha256>` (nothing that could leave the folder).
    static func isStoredName(_ name: String) -> Bool {
        name.hasPrefix("bodies/") && isDigest(String(name.dropFirst("bodies/".count)))
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}

/// One body as it streams out: kept in memory up to ``BodyStore/inlineLimit``, then spilled to a
/// temporary file in the store, hashed as it goes, so a body of any size costs a bounded amount of memory.
final class BodyRecording {
    private let store: BodyStore
    private var hasher = SHA256()
    private var head = Data()
    private var spill: (url: URL, handle: FileHandle)?
    private(set) var size = 0
    /// Why the body could not be stored (a full disk); nothing more is written once set.
    private(set) var failure: String?

    init(store: BodyStore) { self.store = store }

    func append(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
        size += bytes.count
        guard failure == nil else { return }
        if let spill {
            do {
                try spill.handle.write(contentsOf: bytes)
            } catch {
                failure = "the body file \(spill.url.path) could not be written (\(error.localizedDescription))"
            }
            return
        }
        head.append(contentsOf: bytes)
        if head.count > BodyStore.inlineLimit {
            let url = store.directory.appendingPathComponent(".partial-\(UUID().uuidString)")
            do {
                guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteNoPermission)
                }
                let handle = try FileHandle(forWritingTo: url)
                spill = (url, handle)
                try handle.write(contentsOf: head)
            } catch {
                failure = "the body file \(url.path) could not be written (\(error.localizedDescription))"
            }
            head = Data()
        }
    }

    /// Moves the spilled body to its name in the store; a body that could not be written whole, closed
    /// or moved is this recording's ``failure`` (the recorder then refuses the cassette), never stored.
    private func keep(_ spill: (url: URL, handle: FileHandle), as digest: String) {
        let manager = FileManager.default
        do {
            try spill.handle.close()
            guard failure == nil else {
                // Only part of it was written: what is there must not pass for the body. A file left
                // here is a `.partial-` one, which the recorder removes as it finishes.
                try manager.removeItem(at: spill.url)
                return
            }
            let target = store.url(of: digest)
            if manager.fileExists(atPath: target.path) {
                // The same bytes are stored already.
                try manager.removeItem(at: spill.url)
            } else {
                try manager.moveItem(at: spill.url, to: target)
            }
        } catch {
            if failure == nil {
                failure =
                    "the body file \(spill.url.path) could not be stored as bodies/\(digest) (\(error.localizedDescription))"
            }
        }
    }

    /// The content for the HAR: inline text (UTF-8 when it is, base64 otherwise) or a stored file.
    func finish(mimeType: String) -> HAR.Content {
        let digest = BodyStore.hex(hasher.finalize())
        var content = HAR.Content(size: size, mimeType: mimeType)
        content.sha256 = digest
        if let spill {
            keep(spill, as: digest)
            content.file = "bodies/\(digest)"
        } else if size > 0 {
            if let text = String(data: head, encoding: .utf8), Self.isText(mimeType) {
                content.text = text
            } else {
                content.text = head.base64EncodedString()
                content.encoding = "base64"
            }
        }
        return content
    }

    private static func isText(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        return type.hasPrefix("text/") || type.contains("json") || type.contains("xml")
            || type.contains("x-www-form-urlencoded") || type.contains("javascript")
    }
}
