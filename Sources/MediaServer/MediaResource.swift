import Crypto
import Foundation

/// A file under the server's root, with the validators a client needs to resume a download.
struct MediaResource {
    let url: URL
    let length: Int
    let modified: Date

    /// Resolves a request path under `root`, refusing anything that would leave it.
    init?(root: URL, path: String) {
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
        self.modified = modified
    }

    /// A strong ETag from the path, size and modification time: stable across restarts while the
    /// file is unchanged.
    var etag: String {
        let seed = "\(url.path)|\(length)|\(Int(modified.timeIntervalSince1970))"
        let digest = SHA256.hash(data: Data(seed.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return "\"\(digest)\""
    }

    var lastModified: String { HTTPDate.format(modified) }

    var contentType: String {
        switch url.pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "mp4", "m4v": "video/mp4"
        case "mp3": "audio/mpeg"
        case "json": "application/json"
        case "html": "text/html; charset=utf-8"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}

/// IMF-fixdate, the HTTP date format.
enum HTTPDate {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
