import Foundation
import HarnessTimeline
import Hummingbird
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// Apple's HTTP/2 provider API on a local port, with the credentials a provider needs written to disk,
/// and a device gateway that simulated devices receive their notifications from.
///
/// ``bind(configuration:timeline:logger:)`` binds both listeners at once, so a port clash surfaces
/// before anything runs; ``run()`` then serves until graceful shutdown.
public final class FakeAPNsServer: Service, Sendable {
    public let configuration: FakeAPNsConfiguration
    public let gateway: DeviceGateway
    public let log: NotificationLog
    public let signingKey: ProviderSigningKey
    /// The provider API port actually bound.
    public let port: Int
    /// `ca.pem`: the root a client must trust.
    public let caFile: URL
    /// `AuthKey_<keyId>.p8`: the provider's signing key.
    public let keyFile: URL
    public let controlAPI: ControlAPI
    private let listener: any Channel
    private let logger: Logger

    public var url: String { "https://\(configuration.host):\(port)" }

    public static func bind(
        configuration: FakeAPNsConfiguration, timeline: Timeline, logger: Logger = Logger(label: "apns")
    ) async throws -> FakeAPNsServer {
        let authority = try LocalCertificateAuthority()
        let signingKey = ProviderSigningKey(teamId: configuration.teamId, keyId: configuration.keyId)
        try FileManager.default.createDirectory(at: configuration.credentialsDirectory, withIntermediateDirectories: true)
        let caFile = configuration.credentialsDirectory.appendingPathComponent("ca.pem")
        let keyFile = configuration.credentialsDirectory.appendingPathComponent("AuthKey_\(configuration.keyId).p8")
        try authority.pem.write(to: caFile, atomically: true, encoding: .utf8)
        try signingKey.p8.write(to: keyFile, atomically: true, encoding: .utf8)

        let gateway = DeviceGateway(timeline: timeline)
        let log = NotificationLog()
        var verifier = ProviderTokenVerifier()
        verifier.register(signingKey)
        let validator = ProviderRequestValidator(verifier: verifier, topicOfToken: { gateway.topic(of: $0) })
        let endpoint = ProviderEndpoint(
            environment: configuration.environment, validator: validator, gateway: gateway, log: log, timeline: timeline)
        let tlsContext = try authority.makeServerTLSContext()

        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: tlsContext))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings = [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                        HTTP2Setting(parameter: .maxHeaderListSize, value: 16384),
                    ]
                    _ = try pipeline.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(ProviderStreamHandler(endpoint: endpoint))
                        }
                    }
                }
            }
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            throw PortInUse.wrap(error, port: configuration.port, setting: "services.apns.port")
        }
        let control: ControlAPI
        do {
            control = try await ControlAPI.start(
                host: configuration.host, port: configuration.controlPort, gateway: gateway, log: log, logger: logger)
        } catch {
            try? await listener.close()
            throw PortInUse.wrap(error, port: configuration.controlPort, setting: "services.apns.controlPort")
        }
        return FakeAPNsServer(
            configuration: configuration, gateway: gateway, log: log, signingKey: signingKey,
            port: listener.localAddress?.port ?? configuration.port, caFile: caFile, keyFile: keyFile,
            controlAPI: control, listener: listener, logger: logger)
    }

    private init(
        configuration: FakeAPNsConfiguration, gateway: DeviceGateway, log: NotificationLog,
        signingKey: ProviderSigningKey, port: Int, caFile: URL, keyFile: URL, controlAPI: ControlAPI,
        listener: any Channel, logger: Logger
    ) {
        self.configuration = configuration
        self.gateway = gateway
        self.log = log
        self.signingKey = signingKey
        self.port = port
        self.caFile = caFile
        self.keyFile = keyFile
        self.controlAPI = controlAPI
        self.listener = listener
        self.logger = logger
    }

    /// Serves until graceful shutdown or cancellation, then closes both listeners.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    public func close() async {
        try? await listener.close()
        await controlAPI.stop()
    }
}
