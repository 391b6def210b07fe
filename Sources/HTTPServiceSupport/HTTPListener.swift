import HarnessTimeline
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// A Hummingbird application as a `Service` of the caller's group: ``run()`` binds the port, serves,
/// and on the group's graceful shutdown lets open requests finish. ``listening()`` answers the port
/// once it is bound, or throws why it never will be (a port clash as ``PortInUse``).
///
/// It holds its clients to `limits`, and each limit a client reaches is a `service.limit.reached`
/// event on the timeline, naming `service`.
public final class HTTPListener: Service, Sendable {
    private let application: any Service
    private let bound: Readiness<Int>
    private let clash: PortInUse

    /// - Parameters:
    ///   - service: the name limit events carry.
    ///   - setting: the service and configuration property that chose `port`, thrown as ``PortInUse``
    ///     when the port is taken.
    public init(
        router: Router<BasicRequestContext>, host: String, port: Int, service: String,
        setting: (service: String, property: String), timeline: Timeline, limits: HTTPLimits = HTTPLimits(),
        logger: Logger
    ) {
        let bound = Readiness<Int>()
        let connections = ConnectionLimit(limit: limits.maxConnections) {
            LimitReached(service: service, limit: "\(limits.maxConnections) connections").publish(on: timeline)
        }
        let responder = HeaderFieldLimitResponder(inner: router.buildResponder(), limit: limits.maxHeaderFields) {
            LimitReached(service: service, limit: "\(limits.maxHeaderFields) header fields").publish(on: timeline)
        }
        application = Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: nil, availableConnectionsDelegate: connections),
            onServerRunning: { channel in bound.succeed(channel.localAddress?.port ?? port) },
            logger: logger)
        self.bound = bound
        clash = PortInUse(port: port, service: setting.service, setting: setting.property)
    }

    /// The port bound, once it is.
    public var boundPort: Int? { bound.value }

    /// Waits until the port is bound and returns it; throws the error that ended ``run()`` first.
    public func listening() async throws -> Int { try await bound.wait() }

    /// Binds, serves until graceful shutdown or cancellation, and returns once open requests finished.
    public func run() async throws {
        do {
            try await application.run()
        } catch {
            let wrapped = PortInUse.wrap(error, port: clash.port, service: clash.service, setting: clash.setting)
            bound.fail(wrapped)
            throw wrapped
        }
        bound.fail(HTTPServerStopped())
    }
}

struct HTTPServerStopped: Error, CustomStringConvertible {
    var description: String { "the HTTP server stopped before it was listening" }
}
