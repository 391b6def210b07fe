import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The tutorial's MAMP box on port 44447: static files over HTTP/1.1 with keep-alive and pipelining,
/// `HEAD`, byte ranges (several as `multipart/byteranges`), conditional requests (RFC 9110 §13),
/// strong `ETag`s, an Apache "combined" access log, and a per-response bytes-per-second throttle.
public final class MediaServer: Service, Sendable {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    public let configuration: MediaServerConfiguration
    public let port: Int
    private let listener: NIOAsyncChannel<Connection, Never>
    private let timeline: Timeline
    private let logger: Logger
    private let accepting = LockedState<Task<Void, Never>?>(nil)
    private let settings: LockedState<MediaServerSettings>
    private let control = LockedState<RunningHTTPServer?>(nil)
    private let accessLog: AccessLog?

    /// The control API's port.
    public var controlPort: Int { control.withLock { $0?.port ?? 0 } }
    public var controlURL: String { "http://\(configuration.host):\(controlPort)" }

    public var url: String { "http://\(configuration.host):\(port)" }

    public static func bind(
        configuration: MediaServerConfiguration, timeline: Timeline, logger: Logger = Logger(label: "media")
    ) async throws -> MediaServer {
        let listener: NIOAsyncChannel<Connection, Never>
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw PortInUse.wrap(error, port: configuration.port, setting: "services.media.port")
        }
        let accessLog: AccessLog?
        do {
            accessLog = try configuration.accessLog.map { try AccessLog(url: $0) }
        } catch {
            try? await listener.channel.close()
            throw MediaServerError(message: "the access log \(configuration.accessLog?.path ?? "") cannot be written: \(error)")
        }
        let server = MediaServer(
            configuration: configuration, listener: listener, timeline: timeline, logger: logger, accessLog: accessLog)
        do {
            let control = try await MediaControlAPI.start(
                host: configuration.host, port: configuration.controlPort, settings: server.settings, timeline: timeline,
                logger: logger)
            server.control.withLock { $0 = control }
        } catch {
            try? await listener.channel.close()
            throw PortInUse.wrap(error, port: configuration.controlPort, setting: "services.media.controlPort")
        }
        server.accepting.withLock { $0 = Task { await server.acceptConnections() } }
        return server
    }

    private init(
        configuration: MediaServerConfiguration, listener: NIOAsyncChannel<Connection, Never>, timeline: Timeline,
        logger: Logger, accessLog: AccessLog?
    ) {
        self.accessLog = accessLog
        self.configuration = configuration
        self.listener = listener
        self.port = listener.channel.localAddress?.port ?? configuration.port
        self.timeline = timeline
        self.logger = logger
        self.settings = LockedState(MediaServerSettings(throttleBytesPerSecond: configuration.throttleBytesPerSecond))
    }

    /// Serves until graceful shutdown or cancellation.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Stops accepting, ends open connections and waits for them.
    public func close() async {
        let task = accepting.withLock { $0 }
        task?.cancel()
        try? await listener.channel.close()
        await task?.value
        await control.withLock { $0 }?.stop()
        accessLog?.close()
    }

    /// Accepts connections until closed; a bad peer only ends its own connection.
    private func acceptConnections() async {
        await withDiscardingTaskGroup { group in
            try? await listener.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await self.serve(connection) }
                }
            }
            group.cancelAll()
        }
    }

    private func serve(_ connection: Connection) async {
        let client = connection.channel.remoteAddress?.ipAddress ?? "-"
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
                    defer { accessLog?.record(exchange) }
                    try await respond(to: request, outbound: outbound, exchange: &exchange)
                    if !request.isKeepAlive { return }
                }
            }
        }
    }

    private func respond(
        to request: HTTPRequestHead, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        exchange: inout Exchange
    ) async throws {
        let path = String(request.uri.split(separator: "?", maxSplits: 1).first ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "Apache/2.2.26 (Unix) PushHarness")
        headers.add(name: "Date", value: HTTPDate.format(Date()))
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            try await finish(request, status: .methodNotAllowed, headers: headers, outbound: outbound, exchange: &exchange)
            return
        }
        guard let resource = MediaResource(root: configuration.root, path: path) else {
            try await finish(request, status: .notFound, headers: headers, outbound: outbound, exchange: &exchange)
            return
        }
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "ETag", value: resource.etag)
        headers.add(name: "Last-Modified", value: resource.lastModified)
        let answer = MediaAnswer.decide(isGet: request.method == .GET, validators: resource.validators) {
            request.headers.first(name: $0)
        }
        let status: HTTPResponseStatus
        let body: [BodySegment]
        switch answer {
        case .notModified:
            try await finish(request, status: .notModified, headers: headers, outbound: outbound, exchange: &exchange)
            return
        case .preconditionFailed:
            try await finish(request, status: .preconditionFailed, headers: headers, outbound: outbound, exchange: &exchange)
            return
        case .rangeNotSatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(resource.length)")
            try await finish(request, status: .rangeNotSatisfiable, headers: headers, outbound: outbound, exchange: &exchange)
            return
        case .full:
            status = .ok
            headers.add(name: "Content-Type", value: resource.contentType)
            body = resource.length > 0 ? [.file(0...(resource.length - 1))] : []
        case .partial(let bytes):
            status = .partialContent
            headers.add(name: "Content-Type", value: resource.contentType)
            headers.add(name: "Content-Range", value: "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(resource.length)")
            body = [.file(bytes)]
        case .multiple(let ranges):
            status = .partialContent
            let boundary = "PUSHHARNESS-\(resource.etag.filter(\.isHexDigit))"
            headers.add(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
            body = BodySegment.multipart(ranges, boundary: boundary, contentType: resource.contentType, length: resource.length)
        }
        headers.add(name: "Content-Length", value: "\(body.reduce(0) { $0 + $1.count })")
        exchange.status = Int(status.code)
        timeline.publish(
            .mediaRequest, source: "media",
            [
                "method": "\(request.method)", "path": path, "status": "\(status.code)",
                "range": request.headers.first(name: "range") ?? "",
            ])
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if request.method == .GET {
            try await sendBody(body, of: resource, outbound: outbound, sent: &exchange.bodyBytes)
        }
        try await outbound.write(.end(nil))
        timeline.publish(.mediaResponseFinished, source: "media", ["path": path, "bytes": "\(exchange.bodyBytes)"])
    }

    /// Streams the body, pacing it to the configured rate against a fixed schedule so that scheduling
    /// delays do not accumulate into a slower rate. `sent` counts what went out, for the access log,
    /// even when the client goes away halfway.
    private func sendBody(
        _ body: [BodySegment], of resource: MediaResource, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        sent: inout Int
    ) async throws {
        let handle = try FileHandle(forReadingFrom: resource.url)
        defer { try? handle.close() }
        let rate = settings.withLock { $0.throttleBytesPerSecond }
        let chunkSize = rate.map { max(1024, min(65536, $0 / 20)) } ?? 65536
        let start = ContinuousClock.now
        func pace() async throws {
            guard let rate else { return }
            try await Task.sleep(until: start.advanced(by: .seconds(Double(sent) / Double(rate))), clock: .continuous)
        }
        for segment in body {
            switch segment {
            case .text(let text):
                try await pace()
                try await outbound.write(.body(.byteBuffer(ByteBuffer(string: text))))
                sent += text.utf8.count
            case .file(let bytes):
                try handle.seek(toOffset: UInt64(bytes.lowerBound))
                var done = 0
                while done < bytes.count {
                    guard let data = try handle.read(upToCount: min(chunkSize, bytes.count - done)), !data.isEmpty else {
                        return
                    }
                    try await pace()
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: data))))
                    done += data.count
                    sent += data.count
                }
            }
        }
    }

    private func finish(
        _ request: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, exchange: inout Exchange
    ) async throws {
        var headers = headers
        // A 304 has no body and no Content-Length of its own (RFC 9110 §15.4.5).
        let body = request.method == .HEAD || status == .notModified ? "" : "\(status.code) \(status.reasonPhrase)\n"
        if status != .notModified {
            headers.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
        }
        exchange.status = Int(status.code)
        timeline.publish(
            .mediaRequest, source: "media", ["method": "\(request.method)", "path": request.uri, "status": "\(status.code)"])
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if !body.isEmpty {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body))))
            exchange.bodyBytes = body.utf8.count
        }
        try await outbound.write(.end(nil))
    }
}

/// One piece of a response body: literal text (a multipart boundary and part headers) or bytes of
/// the file.
enum BodySegment: Equatable {
    case text(String)
    case file(ClosedRange<Int>)

    var count: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .file(let bytes): bytes.count
        }
    }

    /// A `multipart/byteranges` body (RFC 9110 §14.6): each range with its own `Content-Type` and
    /// `Content-Range`, then the closing boundary.
    static func multipart(_ ranges: [ClosedRange<Int>], boundary: String, contentType: String, length: Int) -> [BodySegment] {
        var segments: [BodySegment] = []
        for (index, range) in ranges.enumerated() {
            segments.append(
                .text(
                    (index == 0 ? "" : "\r\n") + "--\(boundary)\r\nContent-Type: \(contentType)\r\n"
                        + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(length)\r\n\r\n"))
            segments.append(.file(range))
        }
        segments.append(.text("\r\n--\(boundary)--\r\n"))
        return segments
    }
}

/// The media server cannot start as configured.
public struct MediaServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
