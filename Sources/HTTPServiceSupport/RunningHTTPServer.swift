import HarnessTimeline
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// A Hummingbird application started in the background, with the port it really bound.
///
/// `start` returns once the server listens, or throws the bind error (a port clash) instead of waiting
/// forever for a port that will never come. It holds its clients to `limits`, and each limit a client
/// reaches is a `service.limit.reached` event on the timeline, naming `service`.
public final class RunningHTTPServer: Sendable {
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
        self.task = task
    }

    public static func start(
        router: Router<BasicRequestContext>, host: String, port: Int, service: String, timeline: Timeline,
        limits: HTTPLimits = HTTPLimits(), logger: Logger
    ) async throws -> RunningHTTPServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int?.self)
        let connections = ConnectionLimit(limit: limits.maxConnections) {
            LimitReached(service: service, limit: "\(limits.maxConnections) connections").publish(on: timeline)
        }
        let responder = HeaderFieldLimitResponder(inner: router.buildResponder(), limit: limits.maxHeaderFields) {
            LimitReached(service: service, limit: "\(limits.maxHeaderFields) header fields").publish(on: timeline)
        }
        let application = Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout))),
            configuration: .init(
                address: .hostname(host, port: port), serverName: nil, availableConnectionsDelegate: connections),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port) },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = Task {
            do {
                try await group.run()
                continuation.yield(nil)
            } catch {
                continuation.yield(nil)
                throw error
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let first = await iterator.next(), let bound = first else {
            // Bind failed, or the caller was cancelled while waiting: stop whatever is running.
            await group.triggerGracefulShutdown()
            if case .failure(let error) = await task.result { throw error }
            throw HTTPServerStopped()
        }
        return RunningHTTPServer(port: bound, group: group, task: task)
    }

    /// Shuts the server down gracefully (open requests finish) and waits for it.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

struct HTTPServerStopped: Error, CustomStringConvertible {
    var description: String { "the HTTP server stopped before it was listening" }
}
