import HarnessTimeline
import NIOCore
import NIOPosix
import Toxics

/// One proxy's listener: accepts clients, opens a connection to the upstream for each, and relays
/// their bytes through the proxy's toxics. The toxics can change while connections are open: each
/// connection takes the new list at once.
final class ProxyListener: Sendable {
    let name: String
    let upstream: (host: String, port: Int)
    /// The address bound, as `host:port`.
    let listen: String
    private let server: any Channel
    private let shared: Shared

    /// What the accepting channels and the proxy share, under one lock: a connection starts with the
    /// toxics in force when it is registered, and every change after reaches it.
    private final class Shared: Sendable {
        struct State {
            var toxics: [Toxic]
            var connections: [ObjectIdentifier: NIOLoopBound<ProxiedConnection>] = [:]
            var seeds: SplitMix64
            /// Set when the listener closes: a connection still dialling its upstream is closed then.
            var closing = false
            /// Who waits for the last open connection to end (``untilNoConnections()``).
            var idleWaiters: [CheckedContinuation<Void, Never>] = []
            /// Clients accepted and not closed yet, those still dialling their upstream too.
            var clients: ConnectionCap

            /// The waiters to resume now that no connection is open; none while one is.
            mutating func takeIdleWaiters() -> [CheckedContinuation<Void, Never>] {
                guard connections.isEmpty else { return [] }
                defer { idleWaiters.removeAll() }
                return idleWaiters
            }
        }

        let state: LockedState<State>
        let events: ProxyEvents

        init(toxics: [Toxic], seed: UInt64, events: ProxyEvents, cap: Int) {
            state = LockedState(
                State(toxics: toxics, seeds: SplitMix64(seed: seed), clients: ConnectionCap(limit: cap)))
            self.events = events
        }
    }

    private init(name: String, upstream: (host: String, port: Int), listen: String, server: any Channel, shared: Shared)
    {
        self.name = name
        self.upstream = upstream
        self.listen = listen
        self.server = server
        self.shared = shared
    }

    /// Binds `listen` and starts accepting.
    ///
    /// - Throws: what binding threw (a port in use).
    static func bind(
        name: String, listen: (host: String, port: Int), upstream: (host: String, port: Int), toxics: [Toxic],
        seed: UInt64, events: ProxyEvents, cap: Int, total: LockedState<ConnectionCap>
    ) async throws -> ProxyListener {
        let shared = Shared(toxics: toxics, seed: seed, events: events, cap: cap)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { client in
                let admission = shared.state.withLock { $0.clients.admit() }
                let inAll = admission.admitted ? total.withLock { $0.admit() } : (admitted: false, firstRefusal: false)
                guard admission.admitted, inAll.admitted else {
                    if admission.admitted { shared.state.withLock { $0.clients.release() } }
                    if admission.firstRefusal { shared.events.limitReached(name, "\(cap) connections") }
                    if inAll.firstRefusal {
                        shared.events.limitReached(name, "\(total.withLock { $0.limit }) connections in all")
                    }
                    client.close(promise: nil)
                    return client.eventLoop.makeSucceededVoidFuture()
                }
                client.closeFuture.whenComplete { _ in
                    shared.state.withLock { $0.clients.release() }
                    total.withLock { $0.release() }
                }
                return client.eventLoop.makeCompletedFuture {
                    // The upstream is dialled once the client's channel is active, not before.
                    try client.pipeline.syncOperations.addHandler(
                        RelayHandler(source: .upstream) { client in
                            Self.connect(client, to: upstream, name: name, shared: shared)
                        })
                }
            }
            .bind(host: listen.host, port: listen.port).get()
        let port = server.localAddress?.port ?? listen.port
        return ProxyListener(
            name: name, upstream: upstream, listen: "\(listen.host):\(port)", server: server, shared: shared)
    }

    /// Opens the upstream connection for a client just accepted; the client is not read from until it
    /// is open. An upstream that cannot be reached closes the client (as Toxiproxy: accepted, then
    /// closed) and says why on the timeline.
    private static func connect(
        _ client: any Channel, to upstream: (host: String, port: Int), name: String, shared: Shared
    ) {
        let loop = client.eventLoop
        ClientBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelayHandler(source: .downstream))
                }
            }
            .connect(host: upstream.host, port: upstream.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .failure(let error):
                    shared.events.upstreamRefused(name, "\(upstream.host):\(upstream.port)", "\(error)")
                    client.close(promise: nil)
                case .success(let channel):
                    // The client went away while the upstream was being dialled.
                    guard client.isActive else {
                        channel.close(promise: nil)
                        return
                    }
                    // Made and registered under the lock: no change of toxics falls between the two.
                    let connection = shared.state.withLock { state -> ProxiedConnection? in
                        guard !state.closing else { return nil }
                        let connection = ProxiedConnection(
                            client: client, upstream: channel, toxics: state.toxics, seed: state.seeds.next()
                        ) { report in shared.events.cut(name, report) }
                        state.connections[ObjectIdentifier(connection)] = NIOLoopBound(connection, eventLoop: loop)
                        return connection
                    }
                    guard let connection else {
                        client.close(promise: nil)
                        channel.close(promise: nil)
                        return
                    }
                    let key = ObjectIdentifier(connection)
                    client.closeFuture.and(channel.closeFuture).whenComplete { _ in
                        let idle = shared.state.withLock { state in
                            state.connections.removeValue(forKey: key)
                            return state.takeIdleWaiters()
                        }
                        for waiter in idle { waiter.resume() }
                    }
                    for (side, stream) in [(client, ToxicStream.upstream), (channel, .downstream)] {
                        if let relay = try? side.pipeline.syncOperations.handler(type: RelayHandler.self) {
                            relay.attach(connection, stream: stream)
                        }
                    }
                    client.read()
                    channel.read()
                }
            }
    }

    /// Every connection takes `toxics` from now on, new ones and open ones: returns once every open
    /// connection has them, as Toxiproxy answers only then.
    func setToxics(_ toxics: [Toxic]) async {
        let open = shared.state.withLock { state in
            state.toxics = toxics
            return Array(state.connections.values)
        }
        await Self.onEach(open) { $0.update(toxics: toxics) }
    }

    /// Does `change` to each connection on its event loop, and waits until all are done. A submit fails
    /// only on an event loop shut down, which has closed its connections: nothing is left to change.
    private static func onEach(
        _ connections: [NIOLoopBound<ProxiedConnection>], _ change: @escaping @Sendable (ProxiedConnection) -> Void
    ) async {
        for connection in connections { try? await connection.eventLoop.submit { change(connection.value) }.get() }
    }

    /// How many connections are open.
    var openConnections: Int { shared.state.withLock { $0.connections.count } }

    /// Returns once no connection is open: both ends of each closed.
    func untilNoConnections() async {
        await withCheckedContinuation { waiter in
            let now = shared.state.withLock { state in
                guard !state.connections.isEmpty else { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Stops accepting and closes every connection, those still dialling their upstream too.
    func close() async {
        // A listener closed already is the one failure there can be: it is closed either way.
        try? await server.close()
        let (open, idle) = shared.state.withLock { state in
            state.closing = true
            let open = Array(state.connections.values)
            state.connections.removeAll()
            return (open, state.takeIdleWaiters())
        }
        for waiter in idle { waiter.resume() }
        await Self.onEach(open) { $0.close(.fin) }
    }
}

/// The channel handler on each side of a proxied connection: reads go to the connection's pipe for
/// its direction; reading pauses while too much is held or the other side cannot take more.
final class RelayHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The direction this channel is the source of.
    let source: ToxicStream
    private var connection: ProxiedConnection?
    /// What arrived before the connection was attached (NIO drains a socket that half-closes, whether
    /// a read was asked for or not): handed over at ``attach(_:stream:)``.
    private var early: [ByteBuffer] = []
    private var endedEarly = false
    private var closedEarly = false
    /// Called when the channel becomes active: the client's side dials the upstream then.
    private let whenActive: ((any Channel) -> Void)?

    init(source: ToxicStream, whenActive: ((any Channel) -> Void)? = nil) {
        self.source = source
        self.whenActive = whenActive
    }

    func channelActive(context: ChannelHandlerContext) {
        whenActive?(context.channel)
        context.fireChannelActive()
    }

    func attach(_ connection: ProxiedConnection, stream: ToxicStream) {
        self.connection = connection
        let arrived = early
        early = []
        for bytes in arrived { connection.read(bytes, on: source) }
        if !arrived.isEmpty { connection.readComplete(on: source) }
        if endedEarly { connection.inputEnded(on: source) }
        if closedEarly { connection.peerClosed(source) }
    }

    /// The direction this channel is the destination of.
    private var destinationOf: ToxicStream { source.reversed }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection else {
            early.append(unwrapInboundIn(data))
            return
        }
        connection.read(unwrapInboundIn(data), on: source)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        connection?.readComplete(on: source)
    }

    func read(context: ChannelHandlerContext) {
        // Nothing is read until the upstream is open, nor while the pipe holds too much.
        guard let connection, connection.mayRead(source) else { return }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { connection?.destinationWritable(destinationOf) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            guard let connection else {
                endedEarly = true
                return
            }
            connection.inputEnded(on: source)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // Gone without a half-close (a reset, or closed here): the other side goes too.
        guard let connection else {
            closedEarly = true
            return
        }
        connection.peerClosed(source)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset (or another error) on this side: what it sent before still goes through, then the
        // reset follows it to the other side, as it follows the data through a network.
        guard let connection else {
            closedEarly = true
            return
        }
        connection.peerReset(source)
    }
}
