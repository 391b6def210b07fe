import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Hummingbird
import Logging
import ServiceLifecycle

/// Parse Server's installation and push surface: `/parse/installations`, `/parse/classes/_Installation`,
/// `/parse/push` and `/parse/classes/_PushStatus`, with Parse's key rules, stored in SQLite, pushing
/// through a real APNs provider connection.
public final class FakeParseServer: Service, Sendable {
    public let configuration: FakeParseConfiguration
    public let port: Int
    private let server: RunningHTTPServer
    private let pushes: PushSender

    public var url: String { "http://\(configuration.host):\(port)/parse" }

    public static func start(
        configuration: FakeParseConfiguration, timeline: Timeline, logger: Logger = Logger(label: "parse")
    ) async throws -> FakeParseServer {
        let store: ParseStore
        do {
            store = try ParseStore(path: configuration.databasePath)
        } catch {
            throw ParseConfigurationError("cannot open the Parse database \(configuration.databasePath): \(error)")
        }
        let provider = try APNsProvider(configuration: configuration.apns)
        let pushes = PushSender(store: store, provider: provider, timeline: timeline)
        let routes = ParseRoutes(configuration: configuration, store: store, pushes: pushes, timeline: timeline)
        let router = Router()
        routes.register(on: router.group("parse"))
        let server: RunningHTTPServer
        do {
            server = try await RunningHTTPServer.start(
                router: router, host: configuration.host, port: configuration.port, service: "parse",
                timeline: timeline,
                limits: configuration.limits, logger: logger)
        } catch {
            await provider.shutdown()
            throw PortInUse.wrap(error, port: configuration.port, service: "parse", setting: "port")
        }
        return FakeParseServer(configuration: configuration, server: server, pushes: pushes)
    }

    private init(configuration: FakeParseConfiguration, server: RunningHTTPServer, pushes: PushSender) {
        self.configuration = configuration
        self.server = server
        self.port = server.port
        self.pushes = pushes
    }

    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Stops the listener, waits for pushes in flight, and closes the APNs connection.
    public func close() async {
        await server.stop()
        await pushes.shutdown()
    }
}
