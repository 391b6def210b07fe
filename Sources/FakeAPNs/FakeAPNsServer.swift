import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// Apple's HTTP/2 provider API on local ports, with the credentials a provider needs written to disk,
/// and a device gateway that simulated devices receive their notifications from.
///
/// ``bind(configuration:timeline:logger:)`` writes the credentials and binds the provider API's
/// listeners, so a clash on those ports surfaces before anything runs; nothing is accepted until
/// ``run()``, which also binds the control API, serves until the group's graceful shutdown and then
/// says GOAWAY `Shutdown` to every open connection. ``start(configuration:timeline:logger:)`` does both
/// for a caller without a `ServiceGroup`, and ``close()`` ends that.
public final class FakeAPNsServer: Service, Sendable {
    /// `MAX_CONCURRENT_STREAMS` before the first valid provider token, and after it (as traces of real
    /// APNs show).
    static let unauthenticatedConcurrentStreams = 1
    static let authenticatedConcurrentStreams = 1000
    /// The request header list a provider may send (`SETTINGS_MAX_HEADER_LIST_SIZE`).
    static let maxHeaderListSize = 16384

    public let configuration: FakeAPNsConfiguration
    public let gateway: DeviceGateway
    public let log: NotificationLog
    public let faults: FaultInjector
    public let signingKey: ProviderSigningKey
    /// The TLS provider API port actually bound.
    public let port: Int
    /// The production TLS listener's port, when configured.
    public let productionPort: Int?
    /// The plaintext (h2c) listener's port, when configured.
    public let plaintextPort: Int?
    /// The legacy binary gateway's port, when configured.
    public let legacyPort: Int?
    /// The feedback service's port, when configured.
    public let feedbackPort: Int?
    /// `ca.pem`: the root a client must trust.
    public let caFile: URL
    /// `AuthKey_<keyId>.p8`: the provider's signing key.
    public let keyFile: URL
    public let controlAPI: ControlAPI
    /// `deliveryCommand`'s runner, when one is configured.
    let deliveries: DeliveryCommand?
    /// Issues the server certificate and providers' push certificates.
    public let authority: LocalCertificateAuthority
    private let listeners: [any Channel]
    private let connections: ConnectionRegistry
    /// The legacy gateway's and feedback service's connections, told apart from HTTP/2's at shutdown.
    private let legacyConnections: ConnectionRegistry
    private let background = LockedState<BackgroundRun?>(nil)

    public var url: String { "https://\(configuration.host):\(port)" }
    /// Provider connections open right now (for leak checks).
    public var openConnectionCount: Int { connections.count }

    /// Returns when no provider connection is open.
    public func waitUntilNoConnectionIsOpen() async { await connections.waitUntilCount { $0 == 0 } }

    /// Returns once at least `count` provider connections are open.
    public func waitUntilOpenConnections(atLeast count: Int) async { await connections.waitUntilCount { $0 >= count } }
    public var controlURL: String { "http://\(configuration.host):\(controlAPI.port)" }

    public static func bind(
        configuration: FakeAPNsConfiguration, timeline: Timeline, logger: Logger = Logger(label: "apns")
    ) async throws -> FakeAPNsServer {
        let authority = try LocalCertificateAuthority()
        let signingKey = ProviderSigningKey(teamId: configuration.teamId, keyId: configuration.keyId)
        try FileManager.default.createDirectory(
            at: configuration.credentialsDirectory, withIntermediateDirectories: true)
        let caFile = configuration.credentialsDirectory.appendingPathComponent("ca.pem")
        let keyFile = configuration.credentialsDirectory.appendingPathComponent("AuthKey_\(configuration.keyId).p8")
        try authority.pem.write(to: caFile, atomically: true, encoding: .utf8)
        try PrivateFile.write(signingKey.p8, to: keyFile)

        let log = NotificationLog(retention: configuration.logRetention, budget: configuration.logBudget)
        let gateway = DeviceGateway(timeline: timeline, log: log, policy: configuration.delivery)
        let faults = FaultInjector()
        var verifier = ProviderTokenVerifier()
        verifier.register(signingKey, environment: configuration.keyEnvironment)
        let endpoint = ProviderEndpoint(
            verifier: verifier, gateway: gateway, log: log, faults: faults, timeline: timeline)
        let tlsContext = try authority.makeServerTLSContext()
        let connections = ConnectionRegistry()

        let legacyConnections = ConnectionRegistry()
        let legacyTLS = try authority.makeLegacyServerTLSContext()
        var listeners: [any Channel] = []
        /// Binds one listener; on failure closes those already bound and names the setting.
        func listen(_ port: Int, setting: String, _ bootstrap: ServerBootstrap) async throws -> Int {
            do {
                let channel = try await bootstrap.bind(host: configuration.host, port: port).get()
                listeners.append(channel)
                return channel.localAddress?.port ?? port
            } catch {
                for listener in listeners { try? await listener.close() }
                throw PortInUse.wrap(error, port: port, service: "apns", setting: setting)
            }
        }
        func provider(environment: String, tls: Bool) -> ServerBootstrap {
            makeBootstrap(
                endpoint: endpoint, environment: environment, tls: tls ? tlsContext : nil,
                configuration: configuration, connections: connections, timeline: timeline)
        }
        func legacy(_ service: LegacyService) -> ServerBootstrap {
            makeLegacyBootstrap(
                service, endpoint: endpoint, tls: legacyTLS, configuration: configuration,
                connections: legacyConnections, timeline: timeline)
        }
        let port = try await listen(
            configuration.port, setting: "port", provider(environment: configuration.environment, tls: true))
        var productionPort: Int?
        if let configured = configuration.productionPort {
            productionPort = try await listen(
                configured, setting: "productionPort", provider(environment: "production", tls: true))
        }
        var plaintextPort: Int?
        if let configured = configuration.plaintextPort {
            plaintextPort = try await listen(
                configured, setting: "plaintextPort", provider(environment: configuration.environment, tls: false))
        }
        var legacyPort: Int?
        if let configured = configuration.legacyPort {
            legacyPort = try await listen(configured, setting: "legacyPort", legacy(.gateway))
        }
        var feedbackPort: Int?
        if let configured = configuration.feedbackPort {
            feedbackPort = try await listen(configured, setting: "feedbackPort", legacy(.feedback))
        }
        let issuer = PushCertificateIssuer(authority: authority, directory: configuration.credentialsDirectory)
        let deliveries = configuration.deliveryCommand.map {
            DeliveryCommand(
                template: $0, folder: configuration.credentialsDirectory.appendingPathComponent("deliveries"),
                timeline: timeline)
        }
        let control = ControlAPI.make(
            host: configuration.host, port: configuration.controlPort, gateway: gateway, log: log, faults: faults,
            certificates: issuer, limits: configuration.controlLimits, timeline: timeline, logger: logger,
            deliveries: deliveries)
        return FakeAPNsServer(
            configuration: configuration, gateway: gateway, log: log, faults: faults, signingKey: signingKey,
            port: port, productionPort: productionPort, plaintextPort: plaintextPort, legacyPort: legacyPort,
            feedbackPort: feedbackPort, caFile: caFile, keyFile: keyFile, controlAPI: control, authority: authority,
            listeners: listeners, connections: connections, legacyConnections: legacyConnections,
            deliveries: deliveries)
    }

    private static func makeBootstrap(
        endpoint: ProviderEndpoint, environment: String, tls: NIOSSLContext?, configuration: FakeAPNsConfiguration,
        connections: ConnectionRegistry, timeline: Timeline
    ) -> ServerBootstrap {
        acceptingBootstrap(
            tls: tls, configuration: configuration, connections: connections, timeline: timeline,
            full: "\(configuration.maxConnections) connections are open (maxConnections)"
        ) { pipeline in
            if let idleTimeout = configuration.idleTimeout {
                try pipeline.addHandler(IdleStateHandler(allTimeout: TimeAmount(idleTimeout)))
            }
            let initialSettings = [
                HTTP2Setting(parameter: .maxConcurrentStreams, value: unauthenticatedConcurrentStreams),
                HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            ]
            // HTTP/2 on libnghttp2; ProviderConnectionHandler checks request header blocks itself
            // (RequestHeaderCheck) and answers from the frames.
            try pipeline.addHandler(
                NGHTTP2ServerHandler(initialSettings: initialSettings, maxHeaderListSize: maxHeaderListSize))
            try pipeline.addHandler(
                ProviderConnectionHandler(
                    endpoint: endpoint, connection: ProviderConnection(environment: environment),
                    recorder: configuration.recorder))
            try pipeline.addHandler(ConnectionGoAway())
        }
    }

    /// What every FakeAPNs listener does with a new connection: count it against `maxConnections`
    /// (closing it at once when full, `full` saying why), register it for shutdown, then TLS with its
    /// handshake timeout, then the protocol's handlers (`handlers`). Accepting starts in ``run()``.
    static func acceptingBootstrap(
        tls: NIOSSLContext?, configuration: FakeAPNsConfiguration, connections: ConnectionRegistry,
        timeline: Timeline, full: String,
        handlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void
    ) -> ServerBootstrap {
        let open = ConnectionCount(limit: configuration.maxConnections)
        let handshakeTimeout = configuration.handshakeTimeout
        return ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.autoRead, value: false)
            .childChannelInitializer { channel in
                let client = channel.remoteAddress?.description ?? "-"
                guard open.enter(closing: channel) else {
                    timeline.publish(.apnsConnectionRefused, source: "apns", ["client": client, "why": full])
                    // A failed initializer makes the bootstrap close the new channel.
                    return channel.eventLoop.makeFailedFuture(ConnectionCount.Full())
                }
                connections.add(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                        try pipeline.addHandler(
                            HandshakeTimeoutHandler(timeout: TimeAmount(handshakeTimeout)) {
                                timeline.publish(
                                    .apnsConnectionClosed, source: "apns",
                                    ["client": client, "why": "handshake timeout", "after": "\(handshakeTimeout)"])
                            })
                    }
                    try handlers(pipeline)
                }
            }
    }

    private init(
        configuration: FakeAPNsConfiguration, gateway: DeviceGateway, log: NotificationLog, faults: FaultInjector,
        signingKey: ProviderSigningKey, port: Int, productionPort: Int?, plaintextPort: Int?, legacyPort: Int?,
        feedbackPort: Int?, caFile: URL, keyFile: URL, controlAPI: ControlAPI, authority: LocalCertificateAuthority,
        listeners: [any Channel], connections: ConnectionRegistry, legacyConnections: ConnectionRegistry,
        deliveries: DeliveryCommand?
    ) {
        self.deliveries = deliveries
        self.authority = authority
        self.configuration = configuration
        self.gateway = gateway
        self.log = log
        self.faults = faults
        self.signingKey = signingKey
        self.port = port
        self.productionPort = productionPort
        self.plaintextPort = plaintextPort
        self.legacyPort = legacyPort
        self.feedbackPort = feedbackPort
        self.caFile = caFile
        self.keyFile = keyFile
        self.controlAPI = controlAPI
        self.listeners = listeners
        self.connections = connections
        self.legacyConnections = legacyConnections
    }

    /// Binds `configuration`'s listeners and runs the server until ``close()``: for a caller without a
    /// `ServiceGroup`. Throws what kept it from listening (a port clash as `PortInUse`).
    public static func start(
        configuration: FakeAPNsConfiguration, timeline: Timeline, logger: Logger = Logger(label: "apns")
    ) async throws -> FakeAPNsServer {
        let server = try await bind(configuration: configuration, timeline: timeline, logger: logger)
        let run = try await BackgroundRun.start(server, logger: logger) { try await server.listening() }
        server.background.withLock { $0 = run }
        return server
    }

    /// Returns once every listener is bound; throws what ended ``run()`` before that.
    public func listening() async throws { _ = try await controlAPI.listener.listening() }

    /// Accepts provider connections and serves the control API until graceful shutdown or cancellation;
    /// then stops listening, sends GOAWAY `Shutdown` on every open connection and lets the control API's
    /// open requests finish.
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.controlAPI.listener.run() }
            // The delivery commands, one at a time; their queue ends with the server.
            if let deliveries { group.addTask { await deliveries.run() } }
            // The gateway's timers (expiries, coalescing windows), until graceful shutdown or cancellation.
            group.addTask { await cancelWhenGracefulShutdown { await self.gateway.run() } }
            // Ends at graceful shutdown, or when anything here failed (the group is cancelled then).
            group.addTask {
                // Its one error is the cancellation that ends the group, an end of the wait as well.
                try? await gracefulShutdown()
                self.deliveries?.finish()
                for listener in self.listeners { try? await listener.close() }
                async let legacy: Void = self.legacyConnections.shutdownAll(farewell: Self.legacyFarewell)
                await self.connections.shutdownAll()
                await legacy
            }
            for listener in listeners { try await listener.setOption(.autoRead, value: true).get() }
        }
    }

    /// Ends a server begun with ``start(configuration:timeline:logger:)``, or closes the listeners of
    /// one that was bound and never run; a server in a `ServiceGroup` ends with the group.
    public func close() async {
        if let run = background.withLock({ $0 }) {
            await run.stop()
        } else {
            for listener in listeners { try? await listener.close() }
        }
    }

    /// Issues a push certificate for `bundleId` and writes it and its key as PEM files beside `ca.pem`.
    public func issuePushCertificate(bundleId: String, environments: Set<String> = ["sandbox"]) throws
        -> PushCertificateIssuer.Issued
    {
        try PushCertificateIssuer(authority: authority, directory: configuration.credentialsDirectory)
            .issue(bundleId: bundleId, environments: environments)
    }

    /// Forgets every device, notification, injected failure and rate limit.
    public func reset() {
        gateway.reset()
        log.removeAll()
        faults.reset()
    }
}
