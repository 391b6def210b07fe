import AsyncHTTPClient
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
    let timeline: Timeline
    private let logger: Logger
    private let background = LockedState<BackgroundRun?>(nil)
    let settings: LockedState<MediaServerSettings>
    private let control: HTTPListener
    let accessLog: AccessLog?
    let faults: LockedState<MediaFaultPlan>
    let dateHeader = SecondCache(HTTPDate.format)
    let validatorCache = ValidatorCache()
    let resolver: PathResolver
    /// The bucket all connections share, for `serverBytesPerSecond`.
    let serverPacing = LockedState(PacingState())
    /// How many times each path's file "changed" (the `changeETag` fault).
    let generations = LockedState<[String: Int]>([:])
    /// The cassette answered from, when replaying.
    let playback: ServedCassette?
    /// The client for the upstream, when the server stands in front of one: no decompression and no
    /// redirects followed, so that what comes back is passed on (and recorded) as the upstream sent it.
    let upstreamClient: HTTPClient?

    /// The control API's port.
    /// The control API's port, or 0 before ``run()`` has bound it.
    public var controlPort: Int { control.boundPort ?? 0 }
    public var controlURL: String { "http://\(configuration.host):\(controlPort)" }

    public var url: String { "http://\(configuration.host):\(port)" }

    public static func bind(
        configuration: MediaServerConfiguration, timeline: Timeline, logger: Logger = Logger(label: "media")
    ) async throws -> MediaServer {
        if let problem = configuration.faults.lazy.compactMap(\.problem).first {
            throw MediaServerError.unusableFault(problem, atStart: true)
        }
        var plan = MediaFaultPlan()
        for fault in configuration.faults {
            if let refusal = plan.refusal(adding: fault) {
                throw MediaServerError.conflictingFaults(refusal, atStart: true)
            }
            _ = plan.add(fault)
        }
        if let problem = configuration.settings.problem {
            throw MediaServerError.unusableSettings(problem)
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
                            RequestTimeoutHandler(timeout: TimeAmount(configuration.requestTimeout)) {
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
            throw PortInUse.wrap(error, port: configuration.port, service: "media", setting: "port")
        }
        let accessLog: AccessLog?
        do {
            accessLog = try configuration.accessLog.map { try AccessLog(url: $0, timeline: timeline) }
        } catch {
            // It never served: closed as the error goes up, without waiting.
            listener.channel.close(promise: nil)
            throw MediaServerError.accessLogUnwritable(path: configuration.accessLog?.path ?? "", error: "\(error)")
        }
        let server = MediaServer(
            configuration: configuration, listener: listener, timeline: timeline, logger: logger, accessLog: accessLog)
        server.faults.withLock { plan in
            for fault in configuration.faults { _ = plan.add(fault) }
        }
        reference.withLock { $0 = server }
        return server
    }

    /// Binds `configuration`'s listeners and runs the server until ``close()``: for a caller without a
    /// `ServiceGroup`. Throws what kept it from listening (a port clash as `PortInUse`).
    public static func start(
        configuration: MediaServerConfiguration, timeline: Timeline, logger: Logger = Logger(label: "media")
    ) async throws -> MediaServer {
        let server = try await bind(configuration: configuration, timeline: timeline, logger: logger)
        let run = try await BackgroundRun.start(server, logger: logger) { try await server.listening() }
        server.background.withLock { $0 = run }
        return server
    }

    private init(
        configuration: MediaServerConfiguration, listener: NIOAsyncChannel<Connection, Never>, timeline: Timeline,
        logger: Logger, accessLog: AccessLog?
    ) {
        self.accessLog = accessLog
        let settings = LockedState(configuration.settings)
        self.settings = settings
        self.resolver = PathResolver(root: configuration.root.resolvingSymlinksInPath().path)
        self.playback = configuration.replay.map(ServedCassette.init)
        if configuration.upstream != nil {
            var client = HTTPClient.Configuration()
            client.redirectConfiguration = .disallow
            client.decompression = .disabled
            upstreamClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
        } else {
            upstreamClient = nil
        }
        self.configuration = configuration
        self.listener = listener
        self.port = listener.channel.localAddress?.port ?? configuration.port
        self.timeline = timeline
        self.logger = logger
        let faults = LockedState(MediaFaultPlan())
        self.faults = faults
        self.control = MediaControlAPI.make(
            host: configuration.host, port: configuration.controlPort, settings: settings, faults: faults,
            limits: configuration.limits, timeline: timeline, logger: logger)
    }

    /// Adds a fault rule and returns its id; rules are tried in the order added.
    ///
    /// - Throws: ``MediaServerError`` saying what is wrong with the rule.
    @discardableResult
    public func addFault(_ fault: MediaFault) throws -> Int {
        if let problem = fault.problem { throw MediaServerError.unusableFault(problem, atStart: false) }
        return try faults.withLock { plan in
            if let refusal = plan.refusal(adding: fault) {
                throw MediaServerError.conflictingFaults(refusal, atStart: false)
            }
            return plan.add(fault)
        }
    }

    /// The rules in force, with how many requests each matched and fired on.
    public var faultRules: [MediaFaultStatus] { faults.withLock { $0.status } }

    public func removeAllFaults() { faults.withLock { $0.removeAll() } }

    /// Returns once every listener is bound; throws what ended ``run()`` before that.
    public func listening() async throws { _ = try await control.listening() }

    /// Serves files and the control API, and writes the access log's buffered lines every second, until
    /// graceful shutdown or cancellation; then stops accepting, ends open connections and waits for them.
    public func run() async throws {
        do {
            try await serve()
        } catch {
            await closeResources()
            throw error
        }
        await closeResources()
    }

    /// After the last connection: the access log's last lines and its file, the upstream client.
    private func closeResources() async {
        await accessLog?.close()
        if let upstreamClient {
            do {
                try await upstreamClient.shutdown()
            } catch {
                logger.warning("the upstream client did not shut down: \(error)")
            }
        }
    }

    private func serve() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.control.run() }
            group.addTask { await self.acceptConnections() }
            if let accessLog {
                // Its writer ends at graceful shutdown; closeResources writes what came after.
                group.addTask { await cancelWhenGracefulShutdown { await accessLog.run() } }
            }
            // Ends at graceful shutdown, or when anything here failed (the group is cancelled then).
            group.addTask {
                // Its one error is the cancellation that ends the group, an end of the wait as well.
                try? await gracefulShutdown()
                // The accept loop owns the listener: it ends when the channel has closed.
                self.listener.channel.close(promise: nil)
            }
        }
    }

    /// Ends a server begun with ``start(configuration:timeline:logger:)``, or closes the listener of one
    /// that was bound and never run; a server in a `ServiceGroup` ends with the group.
    public func close() async {
        if let run = background.withLock({ $0 }) {
            await run.stop()
        } else {
            // A listener closed already is the one failure there can be: it is closed either way.
            try? await listener.channel.close()
            await accessLog?.close()
        }
    }

    /// Accepts connections until closed; a bad peer only ends its own connection.
    private func acceptConnections() async {
        await withDiscardingTaskGroup { group in
            // An error of the listener itself ends accepting, as its closing does: either way, no more.
            try? await listener.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await self.serve(connection) }
                }
            }
            group.cancelAll()
        }
    }
}

/// What the media server refused: a start as configured, a fault rule added, a request to forward.
public enum MediaServerError: Error, Equatable, CustomStringConvertible {
    /// A fault rule cannot be used (`problem`); at the start, from the configuration, or added later.
    case unusableFault(String, atStart: Bool)
    /// A fault rule does not go with those already in force.
    case conflictingFaults(String, atStart: Bool)
    /// The server's settings (its limits, its throttle) cannot be used.
    case unusableSettings(String)
    /// The access log cannot be opened for writing.
    case accessLogUnwritable(path: String, error: String)
    /// A request was to be forwarded, and the server has no upstream.
    case noUpstream

    /// Said as the harness says it: a start's problems name what they are about, a rule's alone.
    public var description: String {
        switch self {
        case .unusableFault(let problem, let atStart): atStart ? "a media fault cannot be used: \(problem)" : problem
        case .conflictingFaults(let refusal, let atStart): atStart ? "the media faults: \(refusal)" : refusal
        case .unusableSettings(let problem): "the media server's settings cannot be used: \(problem)"
        case .accessLogUnwritable(let path, let error): "the access log \(path) cannot be written: \(error)"
        case .noUpstream: "no upstream client"
        }
    }
}
