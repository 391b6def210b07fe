import Foundation
import HTTPServiceSupport
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix
import Recording

/// One connection's requests, each answered in turn: the faults that apply are drawn, the reply is
/// decided (``MediaReply``) and carried out, the body read from its ``BodySource`` and paced.
extension MediaServer {
    func serve(_ connection: Connection) async {
        let client = connection.channel.remoteAddress?.ipAddress ?? "-"
        let pacing = ConnectionPacing()
        let connectionID = configuration.recorder?.connectionID()
        // A client that resets or goes away ends its connection with an error, and only its own.
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                case .body:
                    break
                case .end:
                    guard let request = head else { continue }
                    head = nil
                    var exchange = Exchange(request: request, client: client)
                    exchange.connection = connectionID
                    // Serving from a cassette, only what is forwarded upstream is new to record.
                    if playback == nil { exchange.recording = record(request, connection: connectionID) }
                    defer {
                        accessLog?.record(exchange)
                        exchange.recording?.finish()
                    }
                    let ending: ConnectionEnding
                    do {
                        ending =
                            if let replay = playback {
                                try await answerFromCassette(
                                    request, replay: replay, outbound: outbound, pacing: pacing, exchange: &exchange)
                            } else if let upstream = configuration.upstream {
                                try await forward(request, to: upstream, outbound: outbound, exchange: &exchange)
                            } else {
                                try await respond(to: request, outbound: outbound, pacing: pacing, exchange: &exchange)
                            }
                    } catch {
                        // The client went away, the run ended or the upstream broke off: the record says
                        // the body was cut here, whatever its framing.
                        exchange.recording?.cutShort()
                        throw error
                    }
                    switch ending {
                    case .keepAlive where request.isKeepAlive:
                        continue
                    case .keepAlive, .closeAfterResponse:
                        // Closing drains what was written first.
                        break
                    case .close:
                        try await flushed(connection.channel)
                    case .reset:
                        try await flushed(connection.channel)
                        await waitUntilAcknowledged(connection.channel)
                        // SO_LINGER 0: close sends RST instead of FIN (a socket that refuses the option
                        // has gone already).
                        try? await (connection.channel as? any SocketOptionProvider)?
                            .setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
                    case .stall:
                        try await flushed(connection.channel)
                        // Never another byte: only the client going away or the server closing ends it.
                        while !Task.isCancelled, connection.channel.isActive {
                            await pause(for: .seconds(3600))
                        }
                    }
                    return
                }
            }
        }
    }

    /// Returns once everything written so far has been handed to the socket. Only while a response is
    /// unfinished (a cut body): it writes an empty body part to learn when the rest is out.
    private func flushed(_ channel: any Channel) async throws {
        try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer()))).get()
    }

    /// Waits (up to five seconds) until the client has acknowledged every segment sent, so that a reset
    /// lands exactly where the fault says rather than discarding what the kernel still held. (A client
    /// that stopped reading, with a full window, is not waited for: its bytes were never sent.)
    private func waitUntilAcknowledged(_ channel: any Channel) async {
        #if os(Linux)
        guard let provider = channel as? any SocketOptionProvider else { return }
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while ContinuousClock.now < deadline, let info = try? await provider.getTCPInfo().get(),
            info.tcpi_unacked > 0
        {
            await pause(for: .milliseconds(1))
        }
        #endif
    }

    /// The headers every answer of this server starts with: who it is, and when.
    func serverHeaders() -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "Apache/2.2.26 (Unix) PushHarness")
        headers.add(name: "Date", value: dateHeader.format(Date()))
        return headers
    }

    /// The reply to a request to `path`, with the faults drawn for it: decided by ``MediaReply`` around
    /// the one lookup it needs, the file (its current version, and its validators from the cache).
    func reply(to request: HTTPRequestHead, path: String, alterations: ReplyAlterations) -> MediaReply {
        var headers = serverHeaders()
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        if let early = MediaReply.early(
            to: request, maxHeaderFields: configuration.limits.maxHeaderFields, alterations: alterations,
            headers: headers)
        {
            return early
        }
        let generation = generations.withLock { $0[path] ?? 0 }
        let resource = resolver.resource(at: path, generation: generation)
        let (etag, lastModified) = resource.map { validatorCache.validators(of: $0) } ?? ("", "")
        return MediaReply.decide(
            to: request, resource: resource, etag: etag, lastModified: lastModified, alterations: alterations,
            headers: headers)
    }

    private func respond(
        to request: HTTPRequestHead, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        pacing: ConnectionPacing, exchange: inout Exchange
    ) async throws -> ConnectionEnding {
        let path = request.path
        // Changes to the settings apply to responses that start after them.
        let current = settings.withLock { $0 }
        let considered = MediaReply.considersFaults(request, maxHeaderFields: configuration.limits.maxHeaderFields)
        let applied = considered ? faults.withLock { $0.next(for: path) } : .none
        for kind in applied.headerChanges.sorted(by: { $0.rawValue < $1.rawValue }) {
            publishFault(MediaFault(kind), path: path, recording: exchange.recording)
        }
        if let fault = applied.ending { publishFault(fault, path: path, recording: exchange.recording) }
        let alterations = applied.alterations
        if alterations.newVersion { generations.withLock { $0[path, default: 0] += 1 } }
        switch reply(to: request, path: path, alterations: alterations) {
        case .closeAtOnce:
            exchange.recording?.fault(kind: applied.ending?.fault.rawValue ?? "closeBeforeHeaders", how: "FIN")
            return .closeAfterResponse
        case .short(let status, let headers):
            try await finish(request, status: status, headers: headers, outbound: outbound, exchange: &exchange)
            return .keepAlive
        case .file(let status, let headers, let body, let resource, let length, let frame):
            exchange.status = Int(status.code)
            publishRequest(request, path: path, status: status)
            try await delayFirstByte(current)
            // Parts are handed to the channel in batches: each hand-over is a hop between this task
            // and the connection's event loop, which cost more than a small file itself.
            var batch = ResponseBatch(outbound: outbound)
            batch.append(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)), bytes: 0)
            exchange.recording?.head(status: Int(status.code), statusText: status.reasonPhrase, headers: Array(headers))
            if request.method == .GET {
                try await sendBody(
                    body, limit: frame.limit, of: resource, settings: current, pacing: pacing, batch: &batch,
                    exchange: &exchange)
            }
            if frame.ending != .keepAlive {
                try await batch.flush()
                publishFaultFired(
                    applied.ending?.fault.rawValue ?? "", path: path, atByte: exchange.bodyBytes, of: length,
                    ending: frame.ending, recording: exchange.recording)
                return frame.ending
            }
            batch.append(.end(nil), bytes: 0)
            try await batch.flush()
            publishFinished(path: path, bytes: exchange.bodyBytes)
            return frame.closeAfter ? .closeAfterResponse : .keepAlive
        }
    }

    func publishFinished(path: String, bytes: Int) {
        timeline.publish(.mediaResponseFinished, source: "media", ["path": path, "bytes": "\(bytes)"])
    }

    /// No fault rule in force, no throttle and no delay: every request can be answered as it comes.
    var answersEverythingAtOnce: Bool {
        let settings = settings.withLock { $0 }
        return configuration.recorder == nil && playback == nil && configuration.upstream == nil
            && settings.throttleBytesPerSecond == nil && settings.serverBytesPerSecond == nil
            && settings.firstByteDelayMilliseconds == 0 && settings.latencyMilliseconds == 0
            && faults.withLock { $0.rules.isEmpty }
    }

    func publishRequest(_ request: HTTPRequestHead, path: String, status: HTTPResponseStatus) {
        timeline.publish(
            .mediaRequest, source: "media",
            [
                "method": request.method.rawValue, "path": path, "status": "\(status.code)",
                "range": request.headers.first(name: "range") ?? "",
            ])
    }

    /// A fault rule applies to this request: on the timeline, and in the cassette's `_applied`.
    func publishFault(_ fault: MediaFault, path: String, recording: ExchangeRecording?) {
        var attributes: [String: String] = ["fault": fault.fault.rawValue]
        if let status = fault.status { attributes["status"] = "\(status)" }
        if let by = fault.by { attributes["by"] = "\(by)" }
        publishFault(attributes, path: path, recording: recording)
    }

    /// A fault, as its attributes (`fault`, and `status` or `by`), applies to a request to `path`.
    func publishFault(_ attributes: [String: String], path: String, recording: ExchangeRecording?) {
        recording?.applied(attributes)
        var attributes = attributes
        attributes["path"] = path
        timeline.publish(.mediaFault, source: "media", EventAttributes(attributes))
    }

    /// A fault ended the body after `atByte` of `of` bytes.
    func publishFaultFired(
        _ fault: String, path: String, atByte: Int, of length: Int, ending: ConnectionEnding,
        recording: ExchangeRecording?
    ) {
        let how = ending == .close ? "FIN" : ending == .reset ? "RST" : "stall"
        recording?.fault(kind: fault, how: how, of: length)
        timeline.publish(
            .mediaFaultFired, source: "media",
            ["fault": fault, "path": path, "atByte": "\(atByte)", "of": "\(length)", "how": how])
    }

    /// Starts the record of an exchange, when the server records.
    func record(_ request: HTTPRequestHead, connection: String?) -> ExchangeRecording? {
        configuration.recorder?.exchange(
            service: "media", link: "device→media", connection: connection, method: request.method.rawValue,
            url: "\(url)\(request.uri)", httpVersion: "HTTP/\(request.version.major).\(request.version.minor)",
            headers: Array(request.headers))
    }

    /// Streams the body, each write waiting for its bytes in the connection's bucket and the server's
    /// (the rates in force when the response started). `sent` counts what went out, for the access
    /// log, even when the client goes away halfway.
    private func sendBody(
        _ body: [BodySegment], limit: Int, of resource: MediaResource, settings: MediaServerSettings,
        pacing: ConnectionPacing, batch: inout ResponseBatch, exchange: inout Exchange
    ) async throws {
        let pacer = ResponsePacer(settings: settings, connection: pacing, server: serverPacing)
        let reads = body.contains { if case .file = $0 { true } else { false } }
        let source: (any BodySource)? = reads ? try await FileBodySource.open(resource.url) : nil
        try await send(
            body, from: source, limit: limit, pacer: pacer, batch: &batch, sent: &exchange.bodyBytes,
            recording: exchange.recording)
    }

    /// The body's segments in order, the file's bytes from `source` a chunk at a time, each paced.
    private func send(
        _ body: [BodySegment], from source: (any BodySource)?, limit: Int, pacer: ResponsePacer,
        batch: inout ResponseBatch, sent: inout Int, recording: ExchangeRecording?
    ) async throws {
        func write(_ buffer: ByteBuffer) async throws {
            if let due = pacer.due(buffer.readableBytes) {
                // What is due goes out before the wait.
                try await batch.flush()
                try await Task.sleep(until: due, clock: .continuous)
            }
            recording?.write(buffer)
            try await batch.add(.body(.byteBuffer(buffer)), bytes: buffer.readableBytes)
            sent += buffer.readableBytes
        }
        for segment in body {
            guard sent < limit else { return }
            switch segment {
            case .text(let text):
                try await write(ByteBuffer(bytes: Array(text.utf8.prefix(limit - sent))))
            case .file(let bytes):
                guard let source else { return }
                var offset = bytes.lowerBound
                while offset <= bytes.upperBound, sent < limit {
                    let end = min(bytes.upperBound + 1, offset + limit - sent)
                    let chunk = try await source.read(from: offset, count: min(pacer.chunkSize, end - offset), end: end)
                    guard chunk.readableBytes > 0 else { return }
                    offset += chunk.readableBytes
                    try await write(chunk)
                }
            }
        }
    }

    /// The server's think time and the link's delay, before a response's first byte.
    private func delayFirstByte(_ settings: MediaServerSettings) async throws {
        let delay = settings.firstByteWait
        if delay > .zero { try await Task.sleep(for: delay) }
    }

    private func finish(
        _ request: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws {
        let (parts, bodyBytes) = shortReply(request, status: status, headers: headers)
        exchange.status = Int(status.code)
        try await delayFirstByte(settings.withLock { $0 })
        exchange.recording?.record(parts)
        try await outbound.write(contentsOf: parts)
        exchange.bodyBytes = bodyBytes
    }

    /// The parts of a short reply (a status and a one-line text body), published to the timeline.
    func shortReply(_ request: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders)
        -> (parts: [HTTPServerResponsePart], bodyBytes: Int)
    {
        var headers = headers
        // A 304 has no body and no Content-Length of its own (RFC 9110 §15.4.5).
        let body = request.method == .HEAD || status == .notModified ? "" : "\(status.code) \(status.reasonPhrase)\n"
        if status != .notModified {
            headers.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
        }
        timeline.publish(
            .mediaRequest, source: "media",
            ["method": request.method.rawValue, "path": request.uri, "status": "\(status.code)"])
        var parts: [HTTPServerResponsePart] = [
            .head(HTTPResponseHead(version: request.version, status: status, headers: headers))
        ]
        if !body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(string: body)))) }
        parts.append(.end(nil))
        return (parts, body.utf8.count)
    }
}
