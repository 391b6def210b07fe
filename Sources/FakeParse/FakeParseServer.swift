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
    private let listener: HTTPListener
    private let pushes: PushSender
    private let background = LockedState<BackgroundRun?>(nil)

    /// The port bound, or the configured one before ``run()`` has bound it.
    public var port: Int { listener.boundPort ?? configuration.port }
    /// The origin recorded exchanges name: the bound port once ``listening()`` has returned.
    private let origin: LockedState<String>
    public var url: String { "http://\(configuration.host):\(port)/parse" }

    /// Opens the database and readies the APNs provider; ``run()`` binds the port and serves.
    public init(
        configuration: FakeParseConfiguration, timeline: Timeline, logger: Logger = Logger(label: "parse")
    ) throws {
        let store: ParseStore
        do {
            store = try ParseStore(path: configuration.databasePath)
        } catch {
            throw ParseConfigurationError.databaseUnusable(configuration.databasePath, error: "\(error)")
        }
        let provider = try APNsProvider(configuration: configuration.apns)
        let pushes = PushSender(
            store: store, provider: provider, timeline: timeline,
            cleansDeadTokens: configuration.cleanupInvalidInstallations)
        let routes = ParseRoutes(configuration: configuration, store: store, pushes: pushes, timeline: timeline)
        let router = Router()
        let origin = LockedState("http://\(configuration.host):\(configuration.port)")
        if let recorder = configuration.recorder {
            router.add(middleware: RecordingMiddleware(recorder: recorder) { origin.withLock { $0 } })
        }
        routes.register(on: router)
        Dashboard(applicationId: configuration.applicationId).register(on: router)
        self.configuration = configuration
        self.pushes = pushes
        self.origin = origin
        listener = HTTPListener(
            router: router, host: configuration.host, port: configuration.port, service: "parse",
            setting: ("parse", "port"), timeline: timeline, limits: configuration.limits, logger: logger)
    }

    /// Makes the server and runs it until ``close()``: for a caller without a `ServiceGroup`. Throws
    /// what kept it from listening (a port clash as `PortInUse`).
    public static func start(
        configuration: FakeParseConfiguration, timeline: Timeline, logger: Logger = Logger(label: "parse")
    ) async throws -> FakeParseServer {
        let server = try FakeParseServer(configuration: configuration, timeline: timeline, logger: logger)
        let run = try await BackgroundRun.start(server, logger: logger) { try await server.listening() }
        server.background.withLock { $0 = run }
        return server
    }

    /// Returns once the port is bound; throws what ended ``run()`` before that.
    public func listening() async throws {
        _ = try await listener.listening()
        origin.withLock { $0 = "http://\(configuration.host):\(port)" }
    }

    /// Serves until graceful shutdown or cancellation; then lets open requests and pushes in flight
    /// finish, and closes the APNs connection.
    public func run() async throws {
        // Every push's task is a child of this one, through the sender's run().
        async let sending: Void = pushes.run()
        await pushes.resume()
        do {
            try await listener.run()
        } catch {
            pushes.stop()
            await sending
            throw error
        }
        pushes.stop()
        await sending
    }

    /// Ends a server begun with ``start(configuration:timeline:logger:)``; a server in a `ServiceGroup`
    /// ends with the group, and one never run only has its APNs provider to close.
    public func close() async {
        if let run = background.withLock({ $0 }) {
            await run.stop()
        } else {
            await pushes.closeProvider()
        }
    }
}
