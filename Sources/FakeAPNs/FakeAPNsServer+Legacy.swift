import HarnessTimeline
import NIOCore
import NIOPosix
import NIOSSL

extension FakeAPNsServer {
    /// The legacy listeners: the binary gateway, and the feedback service.
    enum LegacyService: String {
        case gateway = "legacy gateway"
        case feedback = "feedback service"
    }

    /// A listener of the legacy interface: TLS that requires a push certificate, then the gateway's or
    /// the feedback service's handler. Its connections count against `maxConnections` and are told at
    /// shutdown (the gateway's get status 10).
    static func makeLegacyBootstrap(
        _ service: LegacyService, endpoint: ProviderEndpoint, tls: NIOSSLContext, configuration: FakeAPNsConfiguration,
        connections: ConnectionRegistry, timeline: Timeline
    ) -> ServerBootstrap {
        acceptingBootstrap(
            tls: tls, configuration: configuration, connections: connections, timeline: timeline,
            full: "\(configuration.maxConnections) connections are open to the \(service.rawValue)"
        ) { pipeline in
            switch service {
            case .gateway:
                try pipeline.addHandler(
                    LegacyGatewayHandler(
                        endpoint: endpoint, environment: configuration.environment, recorder: configuration.recorder))
            case .feedback:
                try pipeline.addHandler(
                    FeedbackHandler(
                        gateway: endpoint.gateway, environment: configuration.environment, timeline: timeline))
            }
        }
    }

    /// Says goodbye on a legacy connection: the gateway answers status 10 with the last notification it
    /// took; the feedback service just closes.
    static func legacyFarewell(_ channel: any Channel) {
        channel.pipeline.fireUserInboundEventTriggered(LegacyGatewayHandler.ShutdownEvent())
    }
}
