import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The tutorial's MAMP box on port 44447: static files over HTTP/1.1 with keep-alive, `HEAD`, single
/// byte ranges, `ETag`/`Last-Modified`, and a per-response bytes-per-second throttle.
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
        let server = MediaServer(configuration: configuration, listener: listener, timeline: timeline, logger: logger)
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
        logger: Logger
    ) {
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
                    try await respond(to: request, outbound: outbound)
                    if !request.isKeepAlive { return }
                }
            }
        }
    }

    private func respond(to request: HTTPRequestHead, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>)
        async throws
    {
        let path = String(request.uri.split(separator: "?", maxSplits: 1).first ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "Apache/2.2.26 (Unix) PushHarness")
        headers.add(name: "Date", value: HTTPDate.format(Date()))
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            try await finish(request, status: .methodNotAllowed, headers: headers, outbound: outbound)
            return
        }
        guard let resource = MediaResource(root: configuration.root, path: path) else {
            try await finish(request, status: .notFound, headers: headers, outbound: outbound)
            return
        }
        headers.add(name: "Accept-Ranges", value: "bytes")
        headers.add(name: "ETag", value: resource.etag)
        headers.add(name: "Last-Modified", value: resource.lastModified)
        headers.add(name: "Content-Type", value: resource.contentType)

        var range = ByteRangeRequest(header: request.headers.first(name: "range"), length: resource.length)
        if let ifRange = request.headers.first(name: "if-range"), ifRange != resource.etag,
            ifRange != resource.lastModified
        {
            range = .whole
        }
        let status: HTTPResponseStatus
        let bytes: ClosedRange<Int>?
        switch range {
        case .whole:
            status = .ok
            bytes = resource.length > 0 ? 0...(resource.length - 1) : nil
        case .partial(let selected):
            status = .partialContent
            bytes = selected
            headers.add(name: "Content-Range", value: "bytes \(selected.lowerBound)-\(selected.upperBound)/\(resource.length)")
        case .unsatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(resource.length)")
            try await finish(request, status: .rangeNotSatisfiable, headers: headers, outbound: outbound)
            return
        }
        headers.add(name: "Content-Length", value: "\(bytes?.count ?? 0)")
        timeline.publish(
            .mediaRequest, source: "media",
            [
                "method": "\(request.method)", "path": path, "status": "\(status.code)",
                "range": request.headers.first(name: "range") ?? "",
            ])
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        var sent = 0
        if request.method == .GET, let bytes {
            sent = try await sendBody(of: resource, bytes: bytes, outbound: outbound)
        }
        try await outbound.write(.end(nil))
        timeline.publish(.mediaResponseFinished, source: "media", ["path": path, "bytes": "\(sent)"])
    }

    /// Streams the selected bytes, pacing them to the configured rate against a fixed schedule so that
    /// scheduling delays do not accumulate into a slower rate.
    private func sendBody(
        of resource: MediaResource, bytes: ClosedRange<Int>, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws -> Int {
        let handle = try FileHandle(forReadingFrom: resource.url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(bytes.lowerBound))
        let rate = settings.withLock { $0.throttleBytesPerSecond }
        let chunkSize = rate.map { max(1024, min(65536, $0 / 20)) } ?? 65536
        let start = ContinuousClock.now
        var sent = 0
        while sent < bytes.count {
            let count = min(chunkSize, bytes.count - sent)
            guard let data = try handle.read(upToCount: count), !data.isEmpty else { break }
            if let rate {
                let due = start.advanced(by: .seconds(Double(sent) / Double(rate)))
                try await Task.sleep(until: due, clock: .continuous)
            }
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: data))))
            sent += data.count
        }
        return sent
    }

    private func finish(
        _ request: HTTPRequestHead, status: HTTPResponseStatus, headers: HTTPHeaders,
        outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = headers
        let body = request.method == .HEAD ? "" : "\(status.code) \(status.reasonPhrase)\n"
        headers.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
        timeline.publish(
            .mediaRequest, source: "media", ["method": "\(request.method)", "path": request.uri, "status": "\(status.code)"])
        try await outbound.write(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)))
        if !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(string: body)))) }
        try await outbound.write(.end(nil))
    }
}
