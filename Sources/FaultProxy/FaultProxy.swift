import Foundation
import HarnessTimeline
import JSONValues
import Toxics

/// The fault proxy: named TCP proxies, each listening on its own port and relaying to an upstream
/// through its toxics, managed as Toxiproxy manages them (``ToxiproxyAPI`` serves its HTTP API).
public actor FaultProxy {
    private var proxies: [String: Proxy] = [:]
    private var listeners: [String: ProxyListener] = [:]
    /// One change at a time: a change waits for the one before it, whose awaits (binding, closing,
    /// reaching every connection) would otherwise let another interleave.
    private var changing = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private func exclusively<T>(_ change: () async throws(ToxiproxyError) -> T) async throws(ToxiproxyError) -> T {
        if changing {
            await withCheckedContinuation { waiting.append($0) }
        }
        changing = true
        defer {
            if waiting.isEmpty { changing = false } else { waiting.removeFirst().resume() }
        }
        return try await change()
    }
    private let events: ProxyEvents
    private var seeds: SplitMix64

    /// The most proxies, and toxics on one proxy: enough for any test, and a bound on what a client can make.
    public static let limits = (proxies: 1000, toxics: 100)

    /// The connections each proxy keeps open at once; a client beyond them is closed at once.
    private let connectionCap: Int
    /// The connections all proxies keep open at once (``ProxyRules/maxConnectionsInAll(descriptorLimit:)``).
    private let connectionsInAll: LockedState<ConnectionCap>

    /// - Parameters:
    ///   - seed: draws each connection's toxicity and jitter; the same seed, the same draws.
    ///   - connectionCap: the connections one proxy keeps open at once (1,024 by default, docs/limits.md).
    ///   - connectionsInAll: the connections all proxies keep open at once (by default from the process's
    ///     limit on descriptors).
    public init(
        timeline: Timeline? = nil, seed: UInt64 = .random(in: 0...UInt64.max),
        connectionCap: Int = ProxyRules.maxConnectionsPerProxy, connectionsInAll: Int? = nil
    ) {
        events = ProxyEvents(timeline: timeline)
        seeds = SplitMix64(seed: seed)
        self.connectionCap = max(1, connectionCap)
        let inAll = connectionsInAll ?? ProxyRules.maxConnectionsInAll(descriptorLimit: ProxyRules.descriptorLimit())
        self.connectionsInAll = LockedState(ConnectionCap(limit: max(1, inAll)))
    }

    // MARK: Proxies

    /// Every proxy, by name.
    public func all() -> [Proxy] { proxies.values.sorted { $0.name < $1.name } }

    public func proxy(_ name: String) throws(ToxiproxyError) -> Proxy {
        guard let proxy = proxies[name] else { throw .proxyNotFound }
        return proxy
    }

    /// `POST /proxies`: a new proxy, listening at once when enabled.
    public func create(from data: Data) async throws(ToxiproxyError) -> Proxy {
        try await exclusively { () async throws(ToxiproxyError) -> Proxy in try await createNow(from: data) }
    }

    private func createNow(from data: Data) async throws(ToxiproxyError) -> Proxy {
        let proxy = try Proxy.reading(try GoObject(data))
        guard proxies[proxy.name] == nil else { throw .proxyExists }
        return try await add(proxy)
    }

    /// Adds a proxy that does not exist yet (checked by the caller).
    private func add(_ proxy: Proxy) async throws(ToxiproxyError) -> Proxy {
        guard proxies.count < Self.limits.proxies else {
            throw ToxiproxyError("there are \(Self.limits.proxies) proxies already", status: 409)
        }
        if let problem = ProxyRules.nameProblem(proxy.name) { throw ToxiproxyError(problem, status: 400) }
        _ = try ProxyRules.hostPort(proxy.upstream, field: "upstream")
        if !proxy.listen.isEmpty { _ = try ProxyRules.hostPort(proxy.listen, field: "listen") }
        var proxy = proxy
        if proxy.enabled {
            // Checked once bound, with the port bound: a listener that cannot be bound is Toxiproxy's 500
            // first (a proxy told to listen on its own upstream's port, which is taken, is not a loop).
            proxy.listen = try await start(proxy)
            do {
                try refuseLoop(proxy)
            } catch {
                await listeners.removeValue(forKey: proxy.name)?.close()
                throw error
            }
        }
        proxies[proxy.name] = proxy
        events.publish(.proxyCreated, ["proxy": proxy.name, "listen": proxy.listen, "upstream": proxy.upstream])
        return proxy
    }

    /// `POST|PATCH /proxies/{proxy}`: the fields given change; a new `listen` or `upstream` restarts the
    /// proxy (its connections close), `enabled: false` closes its listener and connections. A proxy that
    /// cannot listen where it now should is kept, disabled, with the new settings (as Toxiproxy does).
    public func update(_ name: String, from data: Data) async throws(ToxiproxyError) -> Proxy {
        try await exclusively { () async throws(ToxiproxyError) -> Proxy in
            guard var proxy = proxies[name] else { throw .proxyNotFound }
            let object = try GoObject(data)
            let listen = try object.string("listen")
            let upstream = try object.string("upstream")
            if let upstream { _ = try ProxyRules.hostPort(upstream, field: "upstream") }
            if let listen, !listen.isEmpty { _ = try ProxyRules.hostPort(listen, field: "listen") }
            let enabled = try object.bool("enabled") ?? proxy.enabled
            let moves =
                (listen.map { $0 != proxy.listen } ?? false) || (upstream.map { $0 != proxy.upstream } ?? false)
            if let listen { proxy.listen = listen }
            if let upstream { proxy.upstream = upstream }
            if enabled { try refuseLoop(proxy) }
            if moves || !enabled, let running = listeners.removeValue(forKey: name) { await running.close() }
            proxy.enabled = enabled
            var failure: ToxiproxyError?
            if enabled, listeners[name] == nil {
                do {
                    proxy.listen = try await start(proxy)
                } catch let error as ToxiproxyError {
                    proxy.enabled = false
                    failure = error
                } catch {
                    proxy.enabled = false
                    failure = ToxiproxyError("\(error)", status: 500)
                }
            }
            proxies[name] = proxy
            events.publish(
                .proxyUpdated,
                ["proxy": name, "listen": proxy.listen, "upstream": proxy.upstream, "enabled": "\(proxy.enabled)"])
            if let failure { throw failure }
            return proxy
        }
    }

    /// `DELETE /proxies/{proxy}`.
    public func delete(_ name: String) async throws(ToxiproxyError) {
        try await exclusively { () async throws(ToxiproxyError) in try await deleteNow(name) }
    }

    private func deleteNow(_ name: String) async throws(ToxiproxyError) {
        guard proxies.removeValue(forKey: name) != nil else { throw .proxyNotFound }
        await listeners.removeValue(forKey: name)?.close()
        events.publish(.proxyDeleted, ["proxy": name])
    }

    /// `POST /populate`: each proxy in the array created, or replaced when its listen or upstream
    /// differ (one that is the same is kept as it is).
    /// - Returns: the proxies made (nil when the array was refused before any was made) and the error
    ///   that stopped it, if one did.
    public func populate(from data: Data) async -> (proxies: [Proxy]?, error: ToxiproxyError?) {
        (try? await exclusively { () async throws(ToxiproxyError) in await populateNow(from: data) })
            ?? (nil, nil)
    }

    private func populateNow(from data: Data) async -> (proxies: [Proxy]?, error: ToxiproxyError?) {
        // Every entry is checked before any proxy is made, as Toxiproxy does: a bad one makes none.
        let wanted: [Proxy]
        do {
            wanted = try Proxy.list(data)
        } catch {
            return (nil, error)
        }
        // Then made in order; one that cannot be made stops the rest, and those made so far are said.
        var made: [Proxy] = []
        for proxy in wanted {
            if let existing = proxies[proxy.name], existing.upstream == proxy.upstream,
                proxy.listen.isEmpty || existing.listen == proxy.listen
            {
                made.append(existing)
                continue
            }
            do {
                if proxies[proxy.name] != nil { try await deleteNow(proxy.name) }
                made.append(try await add(proxy))
            } catch {
                return (made, error)
            }
        }
        return (made, nil)
    }

    /// `POST /reset`: every proxy enabled, every toxic removed.
    public func reset() async {
        // Refused only while the proxy shuts down, when nothing is left to reset.
        _ = try? await exclusively { () async throws(ToxiproxyError) in await resetNow() }
    }

    private func resetNow() async {
        for name in proxies.keys.sorted() {
            guard var proxy = proxies[name] else { continue }
            for toxic in proxy.toxics { events.toxic(.proxyToxicRemoved, name, toxic) }
            proxy.toxics = []
            await listeners[name]?.setToxics([])
            if !proxy.enabled {
                // Enabled only when it makes no loop with the proxies listening (it was created disabled,
                // unchecked) and it can listen; otherwise it stays disabled, as Toxiproxy keeps one that
                // cannot listen.
                proxy.enabled = true
                do {
                    try refuseLoop(proxy)
                    proxy.listen = try await start(proxy)
                } catch {
                    proxy.enabled = false
                    events.publish(
                        .proxyUpdated,
                        [
                            "proxy": name, "listen": proxy.listen, "upstream": proxy.upstream, "enabled": "false",
                            "why": error.message,
                        ])
                }
            }
            proxies[name] = proxy
        }
    }

    /// Closes every proxy.
    public func shutdown() async {
        for (_, listener) in listeners { await listener.close() }
        listeners.removeAll()
    }

    /// Refuses `proxy` (400, naming the proxies in the circle) when a connection to its listener would
    /// come back to a listener of the fault proxy's own: each round would open one more connection,
    /// until the process has no descriptor left.
    private func refuseLoop(_ proxy: Proxy) throws(ToxiproxyError) {
        func hop(_ proxy: Proxy) -> ProxyRules.Hop? {
            guard let upstream = try? ProxyRules.hostPort(proxy.upstream, field: "upstream") else { return nil }
            let listen =
                (try? ProxyRules.hostPort(proxy.listen.isEmpty ? "127.0.0.1:0" : proxy.listen, field: "listen"))
            return ProxyRules.Hop(name: proxy.name, listen: listen ?? ("", 0), upstream: upstream)
        }
        guard let start = hop(proxy) else { return }
        let others = proxies.values.filter { $0.enabled && $0.name != proxy.name }.compactMap(hop)
        guard let circle = ProxyRules.loop(from: start, among: others, local: LocalAddresses.current()) else { return }
        throw ToxiproxyError(
            "proxy \(Toxic.quoted(proxy.name)) would relay to itself: \(circle.joined(separator: " -> ")) (a loop; its upstream \(proxy.upstream) is a listener of this fault proxy)",
            status: 400)
    }

    private func start(_ proxy: Proxy) async throws(ToxiproxyError) -> String {
        let listen = try ProxyRules.hostPort(proxy.listen.isEmpty ? "127.0.0.1:0" : proxy.listen, field: "listen")
        let upstream = try ProxyRules.hostPort(proxy.upstream, field: "upstream")
        do {
            let listener = try await ProxyListener.bind(
                name: proxy.name, listen: listen, upstream: upstream, toxics: proxy.toxics, seed: seeds.next(),
                events: events, cap: connectionCap, total: connectionsInAll)
            listeners[proxy.name] = listener
            return listener.listen
        } catch {
            throw ToxiproxyError("listen tcp \(listen.host):\(listen.port): \(error)", status: 500)
        }
    }

    // MARK: Toxics

    public func toxics(of proxy: String) throws(ToxiproxyError) -> [Toxic] { try self.proxy(proxy).toxics }

    public func toxic(_ name: String, of proxy: String) throws(ToxiproxyError) -> Toxic {
        guard let toxic = try self.proxy(proxy).toxics.first(where: { $0.name == name }) else { throw .toxicNotFound }
        return toxic
    }

    /// `POST /proxies/{proxy}/toxics`: on open connections and new ones.
    public func addToxic(to name: String, from data: Data) async throws(ToxiproxyError) -> Toxic {
        try await exclusively { () async throws(ToxiproxyError) -> Toxic in try await addToxicNow(to: name, from: data)
        }
    }

    private func addToxicNow(to name: String, from data: Data) async throws(ToxiproxyError) -> Toxic {
        guard var proxy = proxies[name] else { throw .proxyNotFound }
        let toxic = try Toxic.decode(data)
        guard !proxy.toxics.contains(where: { $0.name == toxic.name }) else { throw .toxicExists }
        guard proxy.toxics.count < Self.limits.toxics else {
            throw ToxiproxyError("a proxy has at most \(Self.limits.toxics) toxics", status: 409)
        }
        proxy.toxics.append(toxic)
        proxies[name] = proxy
        await listeners[name]?.setToxics(proxy.toxics)
        events.toxic(.proxyToxicAdded, name, toxic)
        return toxic
    }

    /// `POST|PATCH /proxies/{proxy}/toxics/{toxic}`.
    public func updateToxic(_ toxicName: String, of name: String, from data: Data) async throws(ToxiproxyError)
        -> Toxic
    {
        try await exclusively { () async throws(ToxiproxyError) -> Toxic in
            guard var proxy = proxies[name] else { throw .proxyNotFound }
            guard let index = proxy.toxics.firstIndex(where: { $0.name == toxicName }) else { throw .toxicNotFound }
            let toxic = try proxy.toxics[index].updated(with: data)
            proxy.toxics[index] = toxic
            proxies[name] = proxy
            await listeners[name]?.setToxics(proxy.toxics)
            events.toxic(.proxyToxicUpdated, name, toxic)
            return toxic
        }
    }

    /// `DELETE /proxies/{proxy}/toxics/{toxic}`: the link is as it was without it (a `timeout` toxic's
    /// removal closes the connections it held, as Toxiproxy's does).
    public func removeToxic(_ toxicName: String, of name: String) async throws(ToxiproxyError) {
        try await exclusively { () async throws(ToxiproxyError) in
            guard var proxy = proxies[name] else { throw .proxyNotFound }
            guard let index = proxy.toxics.firstIndex(where: { $0.name == toxicName }) else { throw .toxicNotFound }
            let toxic = proxy.toxics.remove(at: index)
            proxies[name] = proxy
            await listeners[name]?.setToxics(proxy.toxics)
            events.toxic(.proxyToxicRemoved, name, toxic)
        }
    }

    // MARK: Typed changes (the harness's own links)

    /// A new proxy named `name`, listening on `listen` (`host:port`, port 0 for any) and relaying to
    /// `upstream`; returns it with the address it listens on.
    public func create(name: String, listen: String = "127.0.0.1:0", upstream: String) async throws(ToxiproxyError)
        -> Proxy
    {
        try await exclusively { () async throws(ToxiproxyError) -> Proxy in
            guard proxies[name] == nil else { throw .proxyExists }
            return try await add(Proxy(name: name, listen: listen, upstream: upstream, enabled: true, toxics: []))
        }
    }

    /// Gives proxy `name` these toxics and this state at once, on open connections too: toxics kept
    /// by name and unchanged keep their state, and the timeline hears of each toxic removed, added or
    /// updated. Disabled, the proxy stops listening and closes its connections; enabled again, it
    /// listens where it did.
    public func set(_ name: String, toxics: [Toxic], enabled: Bool) async throws(ToxiproxyError) {
        try await exclusively { () async throws(ToxiproxyError) in
            guard var proxy = proxies[name] else { throw .proxyNotFound }
            guard toxics.count <= Self.limits.toxics else {
                throw ToxiproxyError("a proxy has at most \(Self.limits.toxics) toxics", status: 409)
            }
            let old = proxy.toxics
            proxy.toxics = toxics
            for toxic in old where !toxics.contains(where: { $0.name == toxic.name }) {
                events.toxic(.proxyToxicRemoved, name, toxic)
            }
            for toxic in toxics {
                if let before = old.first(where: { $0.name == toxic.name }) {
                    if before != toxic { events.toxic(.proxyToxicUpdated, name, toxic) }
                } else {
                    events.toxic(.proxyToxicAdded, name, toxic)
                }
            }
            await listeners[name]?.setToxics(toxics)
            proxies[name] = proxy
            if enabled != proxy.enabled {
                if enabled {
                    // Listening where it did; if that fails, the proxy stays disabled with its new toxics.
                    proxy.listen = try await start(proxy)
                } else {
                    await listeners.removeValue(forKey: name)?.close()
                }
                proxy.enabled = enabled
                events.publish(
                    .proxyUpdated,
                    ["proxy": name, "listen": proxy.listen, "upstream": proxy.upstream, "enabled": "\(enabled)"])
            }
            proxies[name] = proxy
        }
    }

    /// How many connections a proxy has open (for tests and the summary).
    public func openConnections(of name: String) -> Int { listeners[name]?.openConnections ?? 0 }

    /// Returns once the proxy `name` has no open connection (both ends of each closed); at once when
    /// there is no such proxy.
    public func untilNoOpenConnections(of name: String) async {
        await listeners[name]?.untilNoConnections()
    }
}
