import Foundation
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix
import Recording

/// The cassette a server answers from: its entries, and which of them have played.
final class ServedCassette: Sendable {
    let replay: MediaReplay
    let playback: LockedState<Playback>

    init(_ replay: MediaReplay) {
        self.replay = replay
        playback = LockedState(
            Playback(entries: replay.cassette.har.log.entries, matching: replay.matching, service: "media"))
    }
}

/// Serving from a cassette: the entry that matches is answered with its recorded status, headers and
/// bytes, each write at its recorded time after the head, and cut as the recorded fault cut it. The
/// timeline gets the same `media.*` events the recorded run had.
extension MediaServer {
    func answerFromCassette(
        _ request: HTTPRequestHead, replay served: ServedCassette,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, pacing: ConnectionPacing,
        exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        let path = request.path
        let answer = served.playback.withLock {
            $0.answer(method: request.method.rawValue, target: request.uri, headers: Array(request.headers))
        }
        let index: Int
        let cut: Bool
        switch answer {
        case .entry(let recorded): (index, cut) = (recorded, false)
        case .cut(let whole): (index, cut) = (whole, true)
        case .notRecorded(let nearest):
            if let upstream = configuration.upstream {
                exchange.recording = record(request, connection: exchange.connection)
                return try await forward(request, to: upstream, outbound: outbound, exchange: &exchange)
            }
            return try await answerNotRecorded(request, nearest: nearest, outbound: outbound, exchange: &exchange)
        }
        let cassette = served.replay.cassette
        let entry = cassette.har.log.entries[index]
        // A body file is opened inside the cassette and checked against its digest before anything of the
        // answer goes out: a file changed or linked since the cassette was opened is never served.
        let carriesBody = ReplayedBody.carries(status: entry.response.status, method: request.method)
        var bodyFile: BodyFile?
        if carriesBody, entry.response.content.file != nil {
            do {
                bodyFile = try await NIOThreadPool.singleton.runIfActive { try cassette.openBody(of: index) }
            } catch let problem as CassetteError {
                return try await answerUnusableBody(request, problem: problem, outbound: outbound, exchange: &exchange)
            }
        }
        if cut,
            let ending = try await answerRange(
                request, from: index, of: cassette, file: bodyFile, outbound: outbound, exchange: &exchange)
        {
            return ending
        }
        for fault in entry.applied ?? [] {
            publishFault(fault, path: path, recording: exchange.recording)
        }
        // The server's think time before the status line, as recorded (another tool's timings are
        // not replayed: they were measured at the client, through a proxy).
        if entry.writes != nil, entry.timings.wait > 0 {
            try await Task.sleep(for: .milliseconds(entry.timings.wait))
        }
        guard entry.response.status > 0 else {
            // A connection closed before any status line.
            exchange.recording?.fault(kind: entry.fault?.kind ?? "closeBeforeHeaders", how: "FIN")
            return .closeAfterResponse
        }
        let status = HTTPResponseStatus(statusCode: entry.response.status, reasonPhrase: entry.response.statusText)
        // A 304 or 204 that another tool recorded with a body (Chrome puts the cached one in a 304's
        // `content.text`) is sent without it: bytes after such a head break the connection's framing.
        let body = carriesBody ? cassette.body(of: index) : .inline(Data())
        let headers = ReplayedHeaders.make(
            for: entry, bodySize: Self.size(of: body), keepAlive: request.isKeepAlive, head: request.method == .HEAD,
            date: dateHeader.format(Date()))
        exchange.status = entry.response.status
        // The events a live answer publishes: a file (200, 206) or a short reply (every other status).
        let servesFile = [200, 206].contains(entry.response.status)
        if servesFile {
            publishRequest(request, path: path, status: status)
        } else {
            timeline.publish(
                .mediaRequest, source: "media",
                ["method": request.method.rawValue, "path": request.uri, "status": "\(status.code)"])
        }
        var batch = ResponseBatch(outbound: outbound)
        batch.append(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)), bytes: 0)
        exchange.recording?.head(status: Int(status.code), statusText: status.reasonPhrase, headers: Array(headers))
        if carriesBody {
            let whole = try await sendRecordedBody(
                of: entry, body: body, file: bodyFile, batch: &batch, exchange: &exchange)
            // A body file that came up short after it was checked: never promise bytes that will not come.
            guard whole else {
                try await batch.flush()
                return .close
            }
        }
        if let fault = entry.fault {
            try await batch.flush()
            let ending: ConnectionEnding = fault.how == "RST" ? .reset : fault.how == "stall" ? .stall : .close
            // A cut no fault rule made (the client went away) ends the same way, with no fault event.
            if fault.kind == HAR.Fault.connectionClosed {
                exchange.recording?.fault(kind: fault.kind, how: fault.how, of: fault.of)
                return ending
            }
            publishFaultFired(
                fault.kind, path: path, atByte: exchange.bodyBytes, of: fault.of ?? entry.response.content.size,
                ending: ending, recording: exchange.recording)
            return ending
        }
        batch.append(.end(nil), bytes: 0)
        try await batch.flush()
        if servesFile { publishFinished(path: path, bytes: exchange.bodyBytes) }
        let closes = headers.first(name: "connection")?.lowercased() == "close"
        return closes ? .closeAfterResponse : .keepAlive
    }

    /// The recorded body, write by write: each waits for its recorded time after the head. A HAR from
    /// another tool has no writes: its body goes out at once.
    /// - Returns: whether every recorded byte went out.
    private func sendRecordedBody(
        of entry: HAR.Entry, body: Cassette.Body, file: BodyFile?, batch: inout ResponseBatch,
        exchange: inout Exchange
    ) async throws -> Bool {
        let total = entry.writes == nil ? Self.size(of: body) : entry.response.bodySize
        let writes = entry.writes ?? [[0, Double(total)]]
        let source: any BodySource
        switch body {
        case .inline(let data): source = DataBodySource(data)
        case .file:
            // Opened and checked before the head went out.
            guard let file else { return false }
            source = CassetteBodySource(file)
        }
        let head = ContinuousClock.now
        var offset = 0
        for write in writes {
            let due = head.advanced(by: .microseconds(Int64(write[0] * 1000)))
            if due > .now {
                try await batch.flush()
                try await Task.sleep(until: due, clock: .continuous)
            }
            var remaining = Int(write[1])
            while remaining > 0 {
                let chunk = try await source.read(
                    from: offset, count: min(remaining, 64 * 1024), end: offset + remaining)
                guard chunk.readableBytes > 0 else { return false }
                exchange.recording?.write(chunk)
                try await batch.add(.body(.byteBuffer(chunk)), bytes: chunk.readableBytes)
                offset += chunk.readableBytes
                remaining -= chunk.readableBytes
                exchange.bodyBytes += chunk.readableBytes
            }
        }
        return true
    }

    static func size(of body: Cassette.Body) -> Int {
        switch body {
        case .inline(let data): data.count
        case .file(_, let size): size
        }
    }

    /// A recorded body that cannot be served (its file was changed, removed or replaced by a link since
    /// the cassette was opened): answered at once with `500`, the problem in a header and in the body,
    /// and none of the body's bytes. The connection closes after it.
    private func answerUnusableBody(
        _ request: HTTPRequestHead, problem: CassetteError,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        let status = HTTPResponseStatus.internalServerError
        timeline.publish(
            .mediaRequest, source: "media",
            ["method": request.method.rawValue, "path": request.uri, "status": "\(status.code)"])
        let body = "cannot serve \(request.method.rawValue) \(request.uri) from the cassette: \(problem.description)\n"
        var headers = serverHeaders()
        headers.add(name: MediaReplay.cassetteErrorHeader, value: Self.headerText(problem.description))
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        headers.add(name: "Connection", value: "close")
        let parts: [HTTPServerResponsePart] = [
            .head(HTTPResponseHead(version: request.version, status: status, headers: headers)),
            .body(.byteBuffer(ByteBuffer(string: body))), .end(nil),
        ]
        exchange.status = Int(status.code)
        exchange.bodyBytes = body.utf8.count
        exchange.recording?.record(parts)
        try await outbound.write(contentsOf: parts)
        return .closeAfterResponse
    }

    /// `text` as a header value: printable ASCII, anything else a `?`.
    private static func headerText(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { scalars.append((0x20..<0x7F).contains(scalar.value) ? scalar : "?") }
        return String(scalars)
    }

    /// A request the cassette does not hold: answered at once, never a hang, saying so in a header, in
    /// the body and on the timeline.
    private func answerNotRecorded(
        _ request: HTTPRequestHead, nearest: String?, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        timeline.publish(
            .mediaNotRecorded, source: "media",
            ["method": request.method.rawValue, "path": request.uri, "nearest": nearest ?? ""])
        var headers = serverHeaders()
        headers.add(name: MediaReplay.notRecordedHeader, value: "\(request.method.rawValue) \(request.uri)")
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        let body =
            "not recorded: \(request.method.rawValue) \(request.uri) is not in the cassette"
            + (nearest.map { "; the nearest recorded request is \($0)" } ?? "") + "\n"
        let bodyBytes = request.method == .HEAD ? 0 : body.utf8.count
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        let status = HTTPResponseStatus(statusCode: MediaReplay.notRecordedStatus)
        var parts: [HTTPServerResponsePart] = [
            .head(HTTPResponseHead(version: request.version, status: status, headers: headers))
        ]
        if bodyBytes > 0 { parts.append(.body(.byteBuffer(ByteBuffer(string: body)))) }
        parts.append(.end(nil))
        exchange.status = Int(status.code)
        exchange.bodyBytes = bodyBytes
        exchange.recording?.record(parts)
        try await outbound.write(contentsOf: parts)
        return .keepAlive
    }
}

/// The headers a replayed response goes out with.
/// Which answers carry a body (RFC 9110 §6.4.1): none to a HEAD, and none with a 1xx, 204 or 304
/// status, whatever the recording holds.
enum ReplayedBody {
    static func carries(status: Int, method: HTTPMethod) -> Bool {
        method != .HEAD && status >= 200 && status != 204 && status != 304
    }
}

enum ReplayedHeaders {
    /// The recorded headers, with a fresh `Date` and the connection as this request asks. A HAR from
    /// another tool holds the decoded body (no chunks, no content coding), so its framing headers are
    /// replaced by the length of what will be sent.
    static func make(for entry: HAR.Entry, bodySize: Int, keepAlive: Bool, head: Bool, date: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        let ours = entry.writes != nil
        // Another tool's framing headers describe the encoded body it received: the decoded one goes out
        // with its own length, where the recorded Content-Length stood.
        let framing: Set<String> = ["transfer-encoding", "content-encoding"]
        // A HEAD's recorded length is the resource's (its decoded body is empty); 204 has none.
        let framed = !ours && !head && ![204, 304].contains(entry.response.status) && entry.response.status >= 200
        var lengthSet = false
        for header in entry.response.headers {
            let name = header.name.lowercased()
            // HTTP/2 pseudo-headers and connection-specific fields have no place in HTTP/1.1.
            if name.hasPrefix(":") || ["connection", "keep-alive", "date"].contains(name) { continue }
            if !ours, framing.contains(name) { continue }
            if framed, name == "content-length" {
                if !lengthSet { headers.add(name: header.name, value: "\(bodySize)") }
                lengthSet = true
                continue
            }
            headers.add(name: header.name, value: header.value)
        }
        headers.add(name: "Date", value: date)
        if framed, !lengthSet { headers.add(name: "Content-Length", value: "\(bodySize)") }
        let recordedClose = entry.responseHeader("connection")?.lowercased() == "close"
        headers.add(name: "Connection", value: keepAlive && !recordedClose ? "keep-alive" : "close")
        return headers
    }
}

extension MediaReplay {
    /// The header that carries why a recorded body could not be served, on the `500` given instead.
    public static let cassetteErrorHeader = "X-PushHarness-Cassette-Error"
}

/// A cassette's body file, opened and checked against its digest (``Cassette/openBody(of:)``), read on
/// NIO's blocking-I/O threads as ``FileBodySource`` reads a served file: up to a mebibyte at a time,
/// handed out in slices of that read.
final class CassetteBodySource: BodySource, @unchecked Sendable {
    private let file: BodyFile
    /// The last read, and the file offset of its first byte.
    private var window = ByteBuffer()
    private var windowStart = 0

    init(_ file: BodyFile) { self.file = file }

    func read(from offset: Int, count: Int, end: Int) async throws -> ByteBuffer {
        if offset < windowStart || offset >= windowStart + window.readableBytes {
            let file = self.file
            let length = max(count, min(FileBodySource.readAhead, end - offset))
            window = try await NIOThreadPool.singleton.runIfActive {
                try FileBodySource.pread(file.descriptor, at: offset, length: length, allocator: ByteBufferAllocator())
            }
            windowStart = offset
        }
        let skip = offset - windowStart
        return window.getSlice(at: window.readerIndex + skip, length: min(count, window.readableBytes - skip))
            ?? ByteBuffer()
    }
}

/// A body held in memory (a HAR's inline text), read as a file is.
final class DataBodySource: BodySource {
    private let buffer: ByteBuffer

    init(_ data: Data) { buffer = ByteBuffer(bytes: data) }

    func read(from offset: Int, count: Int, end: Int) async throws -> ByteBuffer {
        guard offset < buffer.readableBytes else { return ByteBuffer() }
        return buffer.getSlice(at: offset, length: min(count, buffer.readableBytes - offset)) ?? ByteBuffer()
    }
}
