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
    /// Writes the access log's buffered lines every second.
    private let logFlushing = LockedState<Task<Void, Never>?>(nil)
    private let settings: LockedState<MediaServerSettings>
    private let control = LockedState<RunningHTTPServer?>(nil)
    let accessLog: AccessLog?
    let faults = LockedState(MediaFaultPlan())
    let dateHeader = SecondCache(HTTPDate.format)
    let validatorCache = ValidatorCache()
    let resolver: PathResolver
    /// The bucket all connections share, for `serverBytesPerSecond`.
    private let serverPacing = LockedState(PacingState())
    /// How many times each path's file "changed" (the `changeETag` fault).
    let generations = LockedState<[String: Int]>([:])

    /// The control API's port.
    public var controlPort: Int { control.withLock { $0?.port ?? 0 } }
    public var controlURL: String { "http://\(configuration.host):\(controlPort)" }

    public var url: String { "http://\(configuration.host):\(port)" }

    public static func bind(
        configuration: MediaServerConfiguration, timeline: Timeline, logger: Logger = Logger(label: "media")
    ) async throws -> MediaServer {
        if let problem = configuration.faults.lazy.compactMap(\.problem).first {
            throw MediaServerError(message: "a media fault cannot be used: \(problem)")
        }
        var plan = MediaFaultPlan()
        for fault in configuration.faults {
            if let refusal = plan.refusal(adding: fault) {
                throw MediaServerError(message: "the media faults: \(refusal)")
            }
            _ = plan.add(fault)
        }
        if let problem = configuration.settings.problem {
            throw MediaServerError(message: "the media server's settings cannot be used: \(problem)")
        }
        let listener: NIOAsyncChannel<Connection, Never>
        // Connections need the server, which needs the listener: they meet here once both exist.
        let reference = LockedState<MediaServer?>(nil)
        let open = ConnectionCount(limit: configuration.limits.maxConnections)
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    guard open.enter(closing: channel) else {
                        LimitReached(
                            service: "media", limit: "\(configuration.limits.maxConnections) connections",
                            client: channel.remoteAddress?.ipAddress
                        ).publish(on: timeline)
                        // Closed here: the async bootstrap drops a channel whose initializer failed
                        // without closing it.
                        channel.close(promise: nil)
                        return channel.eventLoop.makeFailedFuture(ConnectionCount.Full())
                    }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        let client = channel.remoteAddress?.ipAddress ?? "-"
                        try channel.pipeline.syncOperations.addHandler(
                            RequestTimeoutHandler(timeout: configuration.requestTimeout.timeAmount) {
                                timeline.publish(
                                    .mediaRequestTimedOut, source: "media",
                                    ["client": client, "after": "\(configuration.requestTimeout)"])
                            })
                        if let server = reference.withLock({ $0 }) {
                            try channel.pipeline.syncOperations.addHandler(
                                QuickResponder(server: server, client: client))
                        }
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
            throw MediaServerError(
                message: "the access log \(configuration.accessLog?.path ?? "") cannot be written: \(error)")
        }
        let server = MediaServer(
            configuration: configuration, listener: listener, timeline: timeline, logger: logger, accessLog: accessLog)
        server.faults.withLock { plan in
            for fault in configuration.faults { _ = plan.add(fault) }
        }
        reference.withLock { $0 = server }
        do {
            let control = try await MediaControlAPI.start(
                host: configuration.host, port: configuration.controlPort, settings: server.settings,
                faults: server.faults, limits: configuration.limits, timeline: timeline, logger: logger)
            server.control.withLock { $0 = control }
        } catch {
            try? await listener.channel.close()
            throw PortInUse.wrap(error, port: configuration.controlPort, setting: "services.media.controlPort")
        }
        server.accepting.withLock { $0 = Task { await server.acceptConnections() } }
        if let accessLog {
            server.logFlushing.withLock {
                $0 = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        accessLog.flush()
                    }
                }
            }
        }
        return server
    }

    private init(
        configuration: MediaServerConfiguration, listener: NIOAsyncChannel<Connection, Never>, timeline: Timeline,
        logger: Logger, accessLog: AccessLog?
    ) {
        self.accessLog = accessLog
        self.resolver = PathResolver(root: configuration.root.resolvingSymlinksInPath().path)
        self.configuration = configuration
        self.listener = listener
        self.port = listener.channel.localAddress?.port ?? configuration.port
        self.timeline = timeline
        self.logger = logger
        self.settings = LockedState(configuration.settings)
    }

    /// Adds a fault rule and returns its id; rules are tried in the order added.
    ///
    /// - Throws: ``MediaServerError`` saying what is wrong with the rule.
    @discardableResult
    public func addFault(_ fault: MediaFault) throws -> Int {
        if let problem = fault.problem { throw MediaServerError(message: problem) }
        return try faults.withLock { plan in
            if let refusal = plan.refusal(adding: fault) { throw MediaServerError(message: refusal) }
            return plan.add(fault)
        }
    }

    /// The rules in force, with how many requests each matched and fired on.
    public var faultRules: [MediaFaultStatus] { faults.withLock { $0.status } }

    public func removeAllFaults() { faults.withLock { $0.removeAll() } }

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
        logFlushing.withLock { $0 }?.cancel()
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
        let pacing = ConnectionPacing()
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
                    let ending = try await respond(to: request, outbound: outbound, pacing: pacing, exchange: &exchange)
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
                        // SO_LINGER 0: close sends RST instead of FIN.
                        try? await (connection.channel as? any SocketOptionProvider)?
                            .setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
                    case .stall:
                        try await flushed(connection.channel)
                        // Never another byte: only the client going away or the server closing ends it.
                        while !Task.isCancelled, connection.channel.isActive {
                            try? await Task.sleep(for: .seconds(3600))
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
            try? await Task.sleep(for: .milliseconds(1))
        }
        #endif
    }

    private func respond(
        to request: HTTPRequestHead, outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        pacing: ConnectionPacing, exchange: inout Exchange
    ) async throws -> Ending {
        let path = request.path
        // Changes to the settings apply to responses that start after them.
        let current = settings.withLock { $0 }
        // A target longer than any fault rule considers, or too many header fields, is refused before a
        // rule is tried (414 and 400 below).
        let considered =
            (request.method == .GET || request.method == .HEAD) && request.uri.utf8.count <= Self.longestTarget
            && request.headers.count <= configuration.limits.maxHeaderFields
        let applied = considered ? faults.withLock { $0.next(for: path) } : .none
        for kind in applied.headerChanges.sorted(by: { $0.rawValue < $1.rawValue }) {
            publishFault(MediaFault(kind), path: path)
        }
        if let fault = applied.ending { publishFault(fault, path: path) }
        if applied.contains(.changeETag) { generations.withLock { $0[path, default: 0] += 1 } }
        let fault = applied.ending
        switch reply(to: request, path: path, faults: applied) {
        case .closeAtOnce:
            return .closeAfterResponse
        case .short(let status, let headers):
            try await finish(request, status: status, headers: headers, outbound: outbound, exchange: &exchange)
            return .keepAlive
        case .file(let status, let headers, let body, let resource, let length, let limit, let ending, let closeAfter):
            exchange.status = Int(status.code)
            publishRequest(request, path: path, status: status)
            try await delayFirstByte(current)
            // Parts are handed to the channel in batches: each hand-over is a hop between this task
            // and the connection's event loop, which cost more than a small file itself.
            var batch = ResponseBatch(outbound: outbound)
            batch.append(.head(HTTPResponseHead(version: request.version, status: status, headers: headers)), bytes: 0)
            if request.method == .GET {
                try await sendBody(
                    body, limit: limit, of: resource, settings: current, pacing: pacing, batch: &batch,
                    sent: &exchange.bodyBytes)
            }
            if ending != .keepAlive {
                try await batch.flush()
                timeline.publish(
                    .mediaFaultFired, source: "media",
                    [
                        "fault": fault!.fault.rawValue, "path": path, "atByte": "\(exchange.bodyBytes)",
                        "of": "\(length)",
                        "how": ending == .close ? "FIN" : ending == .reset ? "RST" : "stall",
                    ])
                return ending
            }
            batch.append(.end(nil), bytes: 0)
            try await batch.flush()
            publishFinished(path: path, bytes: exchange.bodyBytes)
            return closeAfter ? .closeAfterResponse : .keepAlive
        }
    }

    func publishFinished(path: String, bytes: Int) {
        timeline.publish(.mediaResponseFinished, source: "media", ["path": path, "bytes": "\(bytes)"])
    }

    /// No fault rule in force, no throttle and no delay: every request can be answered as it comes.
    var answersEverythingAtOnce: Bool {
        let settings = settings.withLock { $0 }
        return settings.throttleBytesPerSecond == nil && settings.serverBytesPerSecond == nil
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

    private func publishFault(_ fault: MediaFault, path: String) {
        var attributes: EventAttributes = ["fault": fault.fault.rawValue, "path": path]
        if let status = fault.status { attributes["status"] = "\(status)" }
        if let by = fault.by { attributes["by"] = "\(by)" }
        timeline.publish(.mediaFault, source: "media", attributes)
    }

    /// Streams the body, each write waiting for its bytes in the connection's bucket and the server's
    /// (the rates in force when the response started). `sent` counts what went out, for the access
    /// log, even when the client goes away halfway.
    private func sendBody(
        _ body: [BodySegment], limit: Int, of resource: MediaResource, settings: MediaServerSettings,
        pacing: ConnectionPacing, batch: inout ResponseBatch, sent: inout Int
    ) async throws {
        let handle = try FileHandle(forReadingFrom: resource.url)
        defer { try? handle.close() }
        let slowest = [settings.throttleBytesPerSecond, settings.serverBytesPerSecond].compactMap { $0 }.min()
        let chunkSize = MediaServerSettings.chunkSize(rate: slowest)
        let burst = settings.burstBytes ?? chunkSize
        func pace(_ bytes: Int) async throws {
            let now = ContinuousClock.now
            var due = now
            if let rate = settings.throttleBytesPerSecond {
                due = max(due, pacing.reserve(bytes, rate: rate, burst: burst, now: now))
            }
            if let rate = settings.serverBytesPerSecond {
                due = max(due, serverPacing.withLock { $0.reserve(bytes, rate: rate, burst: burst, now: now) })
            }
            if due > now {
                // What is due goes out before the wait.
                try await batch.flush()
                try await Task.sleep(until: due, clock: .continuous)
            }
        }
        for segment in body {
            guard sent < limit else { return }
            switch segment {
            case .text(let text):
                let bytes = Array(text.utf8.prefix(limit - sent))
                try await pace(bytes.count)
                try await batch.add(.body(.byteBuffer(ByteBuffer(bytes: bytes))), bytes: bytes.count)
                sent += bytes.count
            case .file(let bytes):
                try handle.seek(toOffset: UInt64(bytes.lowerBound))
                var done = 0
                while done < bytes.count, sent < limit {
                    let count = min(chunkSize, bytes.count - done, limit - sent)
                    guard let data = try handle.read(upToCount: count), !data.isEmpty else {
                        return
                    }
                    try await pace(data.count)
                    try await batch.add(.body(.byteBuffer(ByteBuffer(bytes: data))), bytes: data.count)
                    done += data.count
                    sent += data.count
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

/// The media server cannot start as configured.
public struct MediaServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
