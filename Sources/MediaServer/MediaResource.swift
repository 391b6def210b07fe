import Crypto
import Foundation

/// A file under the server's root, with the validators a client needs to resume a download.
struct MediaResource {
    let url: URL
    let length: Int
    let modified: Date
    /// How many times the file is to be taken as changed (the `changeETag` fault): each time gives a
    /// new ETag and a Last-Modified one second later.
    let generation: Int

    /// Resolves a request path under `root`, refusing anything that would leave it.
    init?(root: URL, path: String, generation: Int = 0) {
        guard let decoded = path.removingPercentEncoding, !decoded.contains("\0") else { return nil }
        let components = decoded.split(separator: "/")
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        let candidate = components.reduce(root) { $0.appendingPathComponent(String($1)) }.resolvingSymlinksInPath()
        let base = root.resolvingSymlinksInPath().path
        guard candidate.path == base || candidate.path.hasPrefix(base + "/") else { return nil }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: candidate.path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = attributes[.size] as? Int, let modified = attributes[.modificationDate] as? Date
        else { return nil }
        self.url = candidate
        self.length = size
        self.modified = modified.addingTimeInterval(TimeInterval(generation))
        self.generation = generation
    }

    /// A strong ETag from the path, size and modification time: stable across restarts while the
    /// file is unchanged.
    var etag: String {
        let seed = "\(url.path)|\(length)|\(Int(modified.timeIntervalSince1970))|\(generation)"
        let digest = SHA256.hash(data: Data(seed.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return "\"\(digest)\""
    }

    var lastModified: String { HTTPDate.format(modified) }

    var validators: ResourceValidators { ResourceValidators(etag: etag, lastModified: modified, length: length) }

    var contentType: String {
        switch url.pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic": "image/heic"
        case "svg": "image/svg+xml"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "m3u8": "application/vnd.apple.mpegurl"
        case "ts": "video/mp2t"
        case "mp3": "audio/mpeg"
        case "m4a": "audio/mp4"
        case "aac": "audio/aac"
        case "wav": "audio/wav"
        case "json": "application/json"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        case "html", "htm": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
