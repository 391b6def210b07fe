import Foundation
import HarnessTimeline
import NIOHTTP1
import NIOPosix
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
/// Lines gather in memory (a write per request cost a tenth of serving a small file) and ``run()``
/// writes them on NIO's blocking-I/O threads, never on a serving thread: once a second, as soon as 32 KB
/// have gathered, and at the end. Memory stays bounded: past 4 MB not yet written (the disk far behind)
/// the request that adds a line writes what gathered itself, so a slow disk slows serving, never grows
/// the buffer. A write the file refuses is `media.accessLog.failed` on the timeline.
final class AccessLog: Sendable {
    static let bufferSize = 32 * 1024
    static let pendingCap = 4 * 1024 * 1024
    let url: URL
    private let pending = LockedState(Data())
    /// The file, held while a write is made: what is taken from `pending` is written before the next take.
    private let handle: LockedState<FileHandle>
    private let timeline: Timeline
    private let wakeups = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    /// Told how many bytes each write put in the file (a test waits on it: a file's growth is no event).
    private let wrote: (@Sendable (Int) -> Void)?

    init(url: URL, timeline: Timeline, wrote: (@Sendable (Int) -> Void)? = nil) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
            }
        }
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        self.url = url
        self.handle = LockedState(handle)
        self.timeline = timeline
        self.wrote = wrote
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
        let gathered = pending.withLock { pending in
            pending.append(contentsOf: line.utf8)
            return pending.count
        }
        if gathered >= Self.pendingCap {
            write()
        } else if gathered >= Self.bufferSize {
            wakeups.continuation.yield()
        }
    }

    /// Writes what gathers, once a second and whenever 32 KB have gathered, until cancelled (the media
    /// server cancels it at graceful shutdown); ``close()`` writes the rest.
    func run() async {
        let wakeups = wakeups
        await withDiscardingTaskGroup { group in
            group.addTask {
                // A tick a second until cancelled: the sleep's only error is the cancellation that ends it.
                while (try? await Task.sleep(for: .seconds(1))) != nil { wakeups.continuation.yield() }
            }
            for await _ in wakeups.stream { await writeOffThePool() }
            group.cancelAll()
        }
    }

    /// Writes what gathered and closes the file, on NIO's blocking-I/O threads.
    func close() async {
        wakeups.continuation.finish()
        await writeOffThePool()
        let handle = handle
        do {
            try await NIOThreadPool.singleton.runIfActive { try handle.withLock { try $0.close() } }
        } catch {
            failed(bytes: 0, error)
        }
    }

    private func writeOffThePool() async {
        do {
            try await NIOThreadPool.singleton.runIfActive { self.write() }
        } catch {
            write()  // NIO's pool is shut down: only at the very end of the process
        }
    }

    /// Takes what gathered and writes it, holding the file: lines land in the order they came.
    private func write() {
        handle.withLock { handle in
            let data = pending.withLock { pending -> Data in
                defer { pending = Data() }
                return pending
            }
            guard !data.isEmpty else { return }
            do {
                try handle.write(contentsOf: data)
                wrote?(data.count)
            } catch {
                failed(bytes: data.count, error)
            }
        }
    }

    private func failed(bytes: Int, _ error: any Error) {
        timeline.publish(
            .mediaAccessLogFailed, source: "media", ["path": url.path, "bytes": "\(bytes)", "error": "\(error)"])
    }
}
