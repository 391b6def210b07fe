import FaultProxy
import Foundation
import HarnessTimeline
import NetworkConditions
import PushChannel
import Toxics

/// The run's links as its network settings make them: a fault proxy, named after its link, in front of
/// each TCP link the run puts a condition on (at the start or in a step), the push channel's condition,
/// and each change on the timeline (`network.link.changed`). A link no setting names runs straight to
/// its service, as if there were no harness in between.
public final class NetworkLinks: Sendable {
    /// The links some setting of the run names.
    public let inPlay: Set<NetworkLink>
    let proxy: FaultProxy
    /// Each device's push channel: the `apns-device` link.
    private let pushChannels: [PushChannel]
    private let timeline: Timeline
    private struct State {
        var settings = NetworkSettings()
        var conditions: [NetworkLink: LinkCondition] = [:]
    }
    /// Changed one call at a time: at the start, then by the steps, which run in order.
    private let state = LockedState(State())
    /// The proxies' ports, held in ``FreePorts`` for the whole run: a link that is down has closed its
    /// listener, and no backend may be given its port meanwhile.
    private let heldPorts = LockedState<[Int]>([])

    init(inPlay: Set<NetworkLink>, seed: UInt64, pushChannels: [PushChannel], timeline: Timeline) {
        self.inPlay = inPlay
        self.pushChannels = pushChannels
        self.timeline = timeline
        proxy = FaultProxy(timeline: timeline, seed: seed)
    }

    /// The URL clients of `link` use to reach the service at `url`: through a fault proxy, listening on
    /// a free port of the same host, when the link is in play; `url` itself otherwise.
    ///
    /// The port is below the system's ephemeral range (``listeningPorts``), where outgoing
    /// connections never take their ports: a link that goes down closes its listener, and coming back
    /// it listens on the same port again, which an outgoing connection could have taken meanwhile. It is
    /// taken from ``FreePorts``, which no other run of this process, nor a backend, gets it from until
    /// the links shut down.
    func front(_ link: NetworkLink, to url: String) async throws -> String {
        guard link.carriesTCP, inPlay.contains(link), let upstream = ServiceRoutes.authority(of: url) else {
            return url
        }
        let host = upstream[..<(upstream.lastIndex(of: ":") ?? upstream.endIndex)]
        var lastError = ToxiproxyError("no port tried", status: 500)
        // A taken port is tried again elsewhere; after that many, any free port will do.
        for attempt in 0...32 {
            var port = 0
            if attempt < 32 {
                do {
                    port = try FreePorts.shared.take()
                } catch {
                    throw NetworkLinkError(link: link, why: "\(error)")
                }
            }
            do {
                let proxy = try await proxy.create(name: link.rawValue, listen: "\(host):\(port)", upstream: upstream)
                if port != 0 { heldPorts.withLock { $0.append(port) } }
                return ServiceRoutes.url(url, at: proxy.listen)
            } catch {
                if port != 0 { FreePorts.shared.release([port]) }
                guard error.status == 500 else { throw NetworkLinkError(link: link, why: error.message) }
                lastError = error
            }
        }
        throw NetworkLinkError(link: link, why: lastError.message)
    }

    /// Ports for the links' proxies: the 12,000 below the system's ephemeral range
    /// (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 by default), none under 1024.
    static let listeningPorts: ClosedRange<Int> = {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        let top = min(max(low - 1, 2048), 65535)
        return max(top - 12_000, 1024)...top
    }()

    /// The links in play as `settings` make them: each whose condition differs from its current one
    /// takes the new one, and the timeline says so.
    public func apply(_ settings: NetworkSettings) async throws {
        do {
            let previous = state.withLock { $0.conditions }
            for link in inPlay.sorted() {
                let condition = settings.condition(of: link)
                guard condition != previous[link] ?? .clear else { continue }
                if link.carriesTCP {
                    do {
                        try await proxy.set(link.rawValue, toxics: condition.proxyToxics, enabled: !condition.down)
                    } catch {
                        throw NetworkLinkError(link: link, why: error.message)
                    }
                } else {
                    for channel in pushChannels { channel.setCondition(condition) }
                }
                state.withLock { $0.conditions[link] = condition }
                timeline.publish(
                    .networkLinkChanged, source: "network", ["link": link.rawValue, "condition": condition.summary])
            }
            state.withLock { $0.settings = settings }
        }
    }

    /// A step's change: its profile and links over the settings in force.
    public func change(_ step: NetworkSettings) async throws {
        try await apply(state.withLock { $0.settings }.overlaid(by: step))
    }

    /// Closes every proxy and its connections.
    func shutdown() async {
        await proxy.shutdown()
        FreePorts.shared.release(
            heldPorts.withLock { ports in
                defer { ports.removeAll() }
                return ports
            })
    }
}

/// A link's fault proxy could not be set up or changed.
public struct NetworkLinkError: Error, CustomStringConvertible {
    public var link: NetworkLink
    public var why: String
    public var description: String { "the \(link.rawValue) link's fault proxy: \(why)" }
}
