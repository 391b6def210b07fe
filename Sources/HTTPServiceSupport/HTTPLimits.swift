import HarnessTimeline
import Hummingbird
import HummingbirdCore
import NIOCore

/// The limits each plain HTTP/1.1 listener (the control APIs, Parse, the media server) holds its
/// clients to: far more than a test or a backend needs, few enough that a flood of connections or of
/// header fields cannot take the process, and every service in it, down. docs/limits.md lists them.
public struct HTTPLimits: Sendable, Equatable {
    /// Connections open at once. The control APIs and Parse stop accepting at the limit until one
    /// closes (the new connections wait in the kernel's backlog); the media server closes the new one.
    public var maxConnections = 1024
    /// Header fields in one request (Apache's `LimitRequestFields`); a request with more is refused.
    public var maxHeaderFields = 100
    /// A connection that has been idle this long, with no request in flight, is closed.
    public var idleTimeout: Duration = .seconds(60)

    public init() {}
}

/// A limit a client reached: published as `service.limit.reached` on the timeline.
public struct LimitReached: Sendable {
    /// `parse`, `apns.control`, `media.control` or `media`.
    public var service: String
    /// Which limit, and its value: `1024 connections`, `100 header fields`.
    public var limit: String
    /// The client, when one request hit it.
    public var client: String?

    public init(service: String, limit: String, client: String? = nil) {
        self.service = service
        self.limit = limit
        self.client = client
    }

    /// Puts it on the timeline.
    public func publish(on timeline: Timeline) {
        var attributes: EventAttributes = ["service": service, "limit": limit]
        if let client { attributes["client"] = client }
        timeline.publish(.serviceLimitReached, source: "harness", attributes)
    }
}

/// Counts a Hummingbird listener's connections; at the limit it stops accepting (Hummingbird stops
/// reading the listening socket) and reports the limit reached, once each time it fills up.
struct ConnectionLimit: AvailableConnectionsDelegate {
    let limit: Int
    let reached: @Sendable () -> Void
    private var open = 0

    init(limit: Int, reached: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.reached = reached
    }

    mutating func connectionOpened() {
        open += 1
        if open == limit { reached() }
    }

    mutating func connectionClosed() { open -= 1 }

    func isAcceptingNewConnections() -> Bool { open < limit }
}

/// Refuses a request with more header fields than the limit with `431 Request Header Fields Too Large`
/// before any route sees it.
struct HeaderFieldLimitResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context == BasicRequestContext {
    typealias Context = BasicRequestContext
    let inner: Inner
    let limit: Int
    let refused: @Sendable () -> Void

    func respond(to request: Request, context: Context) async throws -> Response {
        // HTTP/1.1's Host is the request's authority here, not one of its fields: counted back in.
        let count = request.headers.count + (request.head.authority == nil ? 0 : 1)
        guard count <= limit else {
            refused()
            let body = "a request may have at most \(limit) header fields; this one has \(count)\n"
            return Response(
                status: .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        return try await inner.respond(to: request, context: context)
    }
}
