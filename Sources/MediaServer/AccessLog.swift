import Foundation
import HarnessTimeline
import NIOHTTP1
import Recording

/// One request and what it was answered, as the access log records it.
struct Exchange {
    var request: HTTPRequestHead
    var client: String
    var received = Date()
    /// 0 until a status line went out: a connection that ended before is logged with 000.
    var status = 0
    /// Body bytes handed to the connection, which is less than `Content-Length` when a fault cut the body
    /// or the client went away.
    var bodyBytes = 0
    /// The exchange's record in a cassette, when the server records.
    var recording: ExchangeRecording?
    /// The connection's id in the cassette, when the server records.
    var connection: String?
}

/// The Apache "combined" access log the tutorial's virtual host writes:
/// `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"`, one line per request, appended.
///
/// Lines are buffered and written when 32 KB have gathered, by a flush the server runs every second,
/// and on close: a write per request cost a tenth of serving a small file.
final class AccessLog: Sendable {
    static let bufferSize = 32 * 1024
    let url: URL
    private let file: LockedState<(handle: FileHandle, pending: Data)>

    init(url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
            }
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        self.url = url
        self.file = LockedState((handle, Data()))
    }

    private static let timestamps = SecondCache(HTTPDate.commonLogFormat)

    static func line(_ exchange: Exchange) -> String {
        let request = exchange.request
        let version = "HTTP/\(request.version.major).\(request.version.minor)"
        let bytes = exchange.bodyBytes == 0 ? "-" : "\(exchange.bodyBytes)"
        let status = exchange.status == 0 ? "000" : "\(exchange.status)"
        return "\(exchange.client) - - [\(timestamps.format(exchange.received))] "
            + "\"\(escaped("\(request.method.rawValue) \(request.uri) \(version)"))\" \(status) \(bytes) "
            + "\"\(escaped(request.headers.first(name: "referer") ?? "-"))\" "
            + "\"\(escaped(request.headers.first(name: "user-agent") ?? "-"))\"\n"
    }

    /// As Apache does: quotes, backslashes and control characters escaped, so a request cannot forge
    /// a log line.
    static func escaped(_ text: String) -> String {
        guard
            text.utf8.contains(where: {
                $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\")
            })
        else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += String(format: "\\x%02x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    func record(_ exchange: Exchange) {
        let line = Self.line(exchange)
        file.withLock { file in
            file.pending.append(contentsOf: line.utf8)
            if file.pending.count >= Self.bufferSize { Self.write(&file) }
        }
    }

    /// Writes what is buffered.
    func flush() { file.withLock { Self.write(&$0) } }

    func close() {
        file.withLock { file in
            Self.write(&file)
            try? file.handle.close()
        }
    }

    private static func write(_ file: inout (handle: FileHandle, pending: Data)) {
        guard !file.pending.isEmpty else { return }
        try? file.handle.write(contentsOf: file.pending)
        file.pending.removeAll(keepingCapacity: true)
    }
}
