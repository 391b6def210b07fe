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
    private let dateHeader = SecondCache(HTTPDate.format)
    private let validatorCache = ValidatorCache()
    private let resolver: PathResolver
    /// The bucket all connections share, for `serverBytesPerSecond`.
    private let serverPacing = LockedState(PacingState())
    /// How many times each path's file "changed" (the `changeETag` fault).
    private let generations = LockedState<[String: Int]>([:])

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
            if let refusal = plan.refusal(adding: fault) { throw MediaServerError(message: "the media faults: \(refusal)") }
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
                            try channel.pipeline.syncOperations.addHandler(QuickResponder(server: server, client: client))
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
            throw MediaServerError(message: "the access log \(configuration.accessLog?.path ?? "") cannot be written: \(error)")
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

    /// How a response leaves its connection.
    enum Ending {
        case keepAlive
        /// The response is complete; close the connection after it.
        case closeAfterResponse
        /// FIN once the response (or the part of it the fault allows) is out.
        case close
        /// RST once the client has acknowledged what was sent.
        case reset
        /// Open, silent, until the client or the server gives up.
        case stall
    }

    /// What a request gets, decided at once from the request, the file and the fault in force.
    enum Reply {
        /// A status with a one-line text body (errors, 304, 412, 416).
        case short(HTTPResponseStatus, HTTPHeaders)
        /// Close before any header.
        case closeAtOnce
        /// The file or parts of it; `limit` is where a fault stops the body.
        case file(
            HTTPResponseStatus, HTTPHeaders, body: [BodySegment], resource: MediaResource, length: Int, limit: Int,
            ending: Ending, closeAfter: Bool)
    }

    /// The longest request target served: Apache's default `LimitRequestLine` is 8190 bytes.
    static let longestTarget = 8190

    /// Decides a request's reply. `faults` are the rules that apply to it (already counted).
    func reply(to request: HTTPRequestHead, path: String, faults: AppliedFaults) -> Reply {
        let fault = faults.ending
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "Apache/2.2.26 (Unix) PushHarness")
        headers.add(name: "Date", value: dateHeader.format(Date()))
        headers.add(name: "Connection", value: request.isKeepAlive ? "keep-alive" : "close")
        guard request.method == .GET || request.method == .HEAD else {
            headers.add(name: "Allow", value: "GET, HEAD")
            return .short(.methodNotAllowed, headers)
        }
        guard request.uri.utf8.count <= Self.longestTarget else { return .short(.uriTooLong, headers) }
        guard request.headers.count <= configuration.limits.maxHeaderFields else { return .short(.badRequest, headers) }
        switch fault?.fault {
        case .closeBeforeHeaders?:
            return .closeAtOnce
        case .status?:
            if let retryAfter = fault?.retryAfter { headers.add(name: "Retry-After", value: "\(retryAfter)") }
            return .short(HTTPResponseStatus(statusCode: fault?.status ?? 503), headers)
        default:
            break
        }
        let generation = generations.withLock { $0[path] ?? 0 }
        guard let resource = resolver.resource(at: path, generation: generation) else {
            return .short(.notFound, headers)
        }
        let rangesSupported = !faults.contains(.ignoreRange)
        if rangesSupported, !faults.contains(.noAcceptRanges) { headers.add(name: "Accept-Ranges", value: "bytes") }
        let (etag, lastModified) = validatorCache.validators(of: resource)
        headers.add(name: "ETag", value: etag)
        headers.add(name: "Last-Modified", value: lastModified)
        let validators = ResourceValidators(etag: etag, lastModified: resource.modified, length: resource.length)
        let answer = MediaAnswer.decide(isGet: request.method == .GET, validators: validators) { name in
            if !rangesSupported, name == "range" || name == "if-range" { return nil }
            return request.headers.first(name: name)
        }
        let status: HTTPResponseStatus
        let body: [BodySegment]
        switch answer {
        case .notModified:
            return .short(.notModified, headers)
        case .preconditionFailed:
            return .short(.preconditionFailed, headers)
        case .rangeNotSatisfiable:
            headers.add(name: "Content-Range", value: "bytes */\(resource.length)")
            return .short(.rangeNotSatisfiable, headers)
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
            let boundary = "PUSHHARNESS-\(etag.filter(\.isHexDigit))"
            headers.add(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
            body = BodySegment.multipart(ranges, boundary: boundary, contentType: resource.contentType, length: resource.length)
        }
        let length = body.reduce(0) { $0 + $1.count }
        // What the body may carry before the fault stops it, and how the connection then ends.
        var limit = length
        var ending = Ending.keepAlive
        var closeAfter = false
        // Without a length the body is framed as chunked: the size is unknown to the client.
        let declaresLength = !faults.contains(.noContentLength)
        switch fault?.fault {
        case .fin?, .reset?, .stall?:
            // A cut at or past the end leaves the body whole: nothing to cut.
            limit = fault!.cutOffset(in: length)
            if limit < length { ending = fault!.fault == .fin ? .close : fault!.fault == .reset ? .reset : .stall }
            if declaresLength { headers.add(name: "Content-Length", value: "\(length)") }
        case .lyingContentLength?:
            let declared = fault!.declaredLength(of: length)
            headers.add(name: "Content-Length", value: "\(declared)")
            // Claiming less sends only that much, so the connection stays usable; claiming more sends
            // everything and closes (after the response, so FIN), leaving the client short.
            if declared < length { limit = declared } else { closeAfter = true }
        default:
            if declaresLength { headers.add(name: "Content-Length", value: "\(length)") }
        }
        return .file(
            status, headers, body: body, resource: resource, length: length, limit: limit, ending: ending,
            closeAfter: closeAfter)
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
                        "fault": fault!.fault.rawValue, "path": path, "atByte": "\(exchange.bodyBytes)", "of": "\(length)",
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
            .mediaRequest, source: "media", ["method": request.method.rawValue, "path": request.uri, "status": "\(status.code)"])
        var parts: [HTTPServerResponsePart] = [.head(HTTPResponseHead(version: request.version, status: status, headers: headers))]
        if !body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(string: body)))) }
        parts.append(.end(nil))
        return (parts, body.utf8.count)
    }
}

extension HTTPRequestHead {
    /// The path, without the query.
    var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }
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

/// One token bucket, remade when its rate or burst changes.
struct PacingState {
    private var bucket: TokenBucket?

    mutating func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        if bucket?.rate != Double(rate) || bucket?.burst != Double(burst) {
            bucket = TokenBucket(rate: rate, burst: burst, now: now)
        }
        return bucket!.reserve(bytes, now: now)
    }
}

/// A connection's bucket: it lasts across the responses of a keep-alive connection.
final class ConnectionPacing {
    private var state = PacingState()

    func reserve(_ bytes: Int, rate: Int, burst: Int, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        state.reserve(bytes, rate: rate, burst: burst, now: now)
    }
}

/// Response parts waiting to be handed to the channel together.
struct ResponseBatch {
    /// Flushed once this much body is waiting, so a large file streams rather than piling up.
    static let limit = 256 * 1024
    let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    private var parts: [HTTPServerResponsePart] = []
    private var bytes = 0

    init(outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) { self.outbound = outbound }

    mutating func append(_ part: HTTPServerResponsePart, bytes: Int) {
        parts.append(part)
        self.bytes += bytes
    }

    mutating func add(_ part: HTTPServerResponsePart, bytes: Int) async throws {
        append(part, bytes: bytes)
        if self.bytes >= Self.limit { try await flush() }
    }

    mutating func flush() async throws {
        guard !parts.isEmpty else { return }
        let ready = parts
        parts.removeAll(keepingCapacity: true)
        bytes = 0
        try await outbound.write(contentsOf: ready)
    }
}

/// A date format applied once a second: the `Date` header, the access log's time.
final class SecondCache: Sendable {
    private let format: @Sendable (Date) -> String
    private let cached = LockedState<(second: Int, text: String)>((-1, ""))

    init(_ format: @escaping @Sendable (Date) -> String) { self.format = format }

    func format(_ date: Date) -> String {
        let second = Int(date.timeIntervalSince1970.rounded(.down))
        return cached.withLock { cached in
            if cached.second != second { cached = (second, format(date)) }
            return cached.text
        }
    }
}

/// Each file's `ETag` and `Last-Modified`, made again only when its size, time or generation change.
final class ValidatorCache: Sendable {
    private struct Key: Hashable {
        var path: String
        var length: Int
        var modified: Double
        var generation: Int
    }

    private let cache = LockedState<[Key: (etag: String, lastModified: String)]>([:])

    func validators(of resource: MediaResource) -> (etag: String, lastModified: String) {
        let key = Key(
            path: resource.url.path, length: resource.length, modified: resource.modified.timeIntervalSince1970,
            generation: resource.generation)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let made = (resource.etag, resource.lastModified)
        cache.withLock { cache in
            // A served tree is small; should one grow past this, start over rather than grow forever.
            if cache.count >= 10_000 { cache.removeAll() }
            cache[key] = made
        }
        return made
    }
}

/// Request paths resolved to files under the root. A path's resolution (realpath, checked to be
/// under the root) is kept, so a later request for it costs one stat; the kept file is inside the
/// root whatever happens to symlinks afterwards, so nothing outside can be served.
final class PathResolver: Sendable {
    private let root: String
    private let resolved = LockedState<[String: String]>([:])

    init(root: String) { self.root = root }

    func resource(at path: String, generation: Int) -> MediaResource? {
        if let file = resolved.withLock({ $0[path] }), let resource = MediaResource(file: file, generation: generation) {
            return resource
        }
        guard let resource = MediaResource(root: root, path: path, generation: generation) else { return nil }
        resolved.withLock { resolved in
            if resolved.count >= 10_000 { resolved.removeAll() }
            resolved[path] = resource.url.path
        }
        return resource
    }
}
