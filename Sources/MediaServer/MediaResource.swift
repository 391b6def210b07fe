import Foundation

/// A file under the server's root, with the validators a client needs to resume a download.
struct MediaResource: Equatable {
    let url: URL
    let length: Int
    let modified: Date
    /// How many times the file is to be taken as changed (the `changeETag` fault): each time gives a
    /// new ETag and a Last-Modified one second later.
    let generation: Int

    /// A file as found (tests build replies from one without a disk).
    init(url: URL, length: Int, modified: Date, generation: Int = 0) {
        self.url = url
        self.length = length
        self.modified = modified
        self.generation = generation
    }

    /// Resolves a request path under `root` (itself already free of symlinks), refusing anything that
    /// would leave it: `..` and `.` segments, NUL bytes, and symlinks that lead outside; and a path that
    /// ends in `/`.
    init?(root: String, path: String, generation: Int = 0) {
        // A slash at the end names a directory, and none is served: `/photo.jpg/` is 404, as on Apache.
        guard let decoded = path.removingPercentEncoding, !decoded.contains("\0"), !decoded.hasSuffix("/") else {
            return nil
        }
        let components = decoded.split(separator: "/")
        guard !components.contains(where: { $0 == ".." || $0 == "." }) else { return nil }
        // realpath(3) and stat(2) directly: Foundation's equivalents cost a fifth of a small response.
        guard let resolved = realpath(([root] + components.map(String.init)).joined(separator: "/"), nil) else {
            return nil
        }
        let candidate = String(cString: resolved)
        free(resolved)
        guard candidate == root || candidate.hasPrefix(root + "/") else { return nil }
        self.init(file: candidate, generation: generation)
    }

    /// A file already resolved under the root: only its type, size and time are read.
    init?(file candidate: String, generation: Int) {
        var info = stat()
        guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        self.url = URL(fileURLWithPath: candidate)
        self.length = Int(info.st_size)
        let modified = Date(
            timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        self.modified = modified.addingTimeInterval(TimeInterval(generation))
        self.generation = generation
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A strong ETag from the path, size, modification time and generation: stable across restarts
    /// while the file is unchanged. FNV-1a, 64 bits: it only has to tell versions of one file apart.
    var etag: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(url.path)|\(length)|\(Int(modified.timeIntervalSince1970))|\(generation)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        var hex: [UInt8] = [UInt8(ascii: "\"")]
        for shift in stride(from: 60, through: 0, by: -4) {
            hex.append(Self.hexDigits[Int((hash >> UInt64(shift)) & 0xF)])
        }
        hex.append(UInt8(ascii: "\""))
        return String(decoding: hex, as: UTF8.self)
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
