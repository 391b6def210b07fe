import DeviceProtocol
import Foundation
import HarnessTimeline
import NetworkConditions
import Recording

/// APNs's persistent connection to one device, as a component of its own: the one path every push
/// takes from the push service (a ``PushServiceEndpoint``) to the device (a ``PushRegistry`` client).
/// Pushes arrive typed, once, and reach the device one at a time in the order the service delivered
/// them (or as the `apns-device` link's faults let them), each device on tasks the channel owns;
/// ``close()`` ends them. Faults on the channel and its recording land here.
public final class PushChannel: PushRegistry, Sendable {
    /// A push as the service handed it over: its fate on the link then, and when.
    private typealias Arrival = (push: IncomingPush, fate: PushLinkRule.Fate, at: ContinuousClock.Instant)

    private struct Registration {
        var token: String
        var arrivals: AsyncStream<Arrival>.Continuation
        /// Its intake and its delivery, as two children of one task; ``close()`` cancels and awaits it.
        var work: Task<Void, Never>
    }

    /// The `apns-device` link as it stands, the rule that decides each push's fate on it, and whether
    /// the device's network is up (``setReachable(_:)``).
    private struct LinkState {
        var condition = LinkCondition.clear
        var rule: PushLinkRule
        var reachable = true

        /// Whether APNs can reach the device: its network up, the link not down, not losing everything.
        var online: Bool { reachable && !condition.down && !(condition.profile?.losesEverything ?? false) }
    }

    private let endpoint: any PushServiceEndpoint
    private let registrations = LockedState<[Registration]>([])
    private let link: LockedState<LinkState>
    /// Held while the service hears of a change of reachability, so that changes reach it in the order
    /// they were made. Not the link's lock: a service may hand over stored pushes while it hears that
    /// the device is back, and handing over takes the link's lock.
    private let reachabilityUpdates = LockedState(())
    /// Records every delivery into a cassette (`apns→device`), when set.
    private let recorder: CassetteRecorder?
    /// Hears what the link's faults did to each push.
    private let timeline: Timeline?

    /// - Parameter seed: draws the link's drops, duplicates and delays; the same seed, the same draws.
    public init(
        endpoint: any PushServiceEndpoint, recorder: CassetteRecorder? = nil, timeline: Timeline? = nil,
        seed: UInt64 = 0x5EED
    ) {
        self.endpoint = endpoint
        self.recorder = recorder
        self.timeline = timeline
        link = LockedState(LinkState(rule: PushLinkRule(seed: seed)))
    }

    public func registerDevice(topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void) async throws
        -> String
    {
        // The service hands pushes over on its own threads; the link's faults decide each one's fate
        // on the registration's intake task, and the device takes them one at a time, each when it is
        // due, on its delivery task. Due times keep the order pushes came in (one TCP connection); only
        // a reorder draw, waited out on a task of its own, lets a push fall behind later ones.
        let (arrivals, arrival) = AsyncStream.makeStream(of: Arrival.self)
        let (releases, release) = AsyncStream.makeStream(of: (IncomingPush, ContinuousClock.Instant).self)
        // The fate is decided as the service hands the push over, under the link as it is then.
        let token = endpoint.register(topic: topic) { [link] push in
            let fate = link.withLock {
                $0.rule.fate(ofPushOf: (try? JSONEncoder().encode(push.payload).count) ?? 0, under: $0.condition)
            }
            arrival.yield((push, fate, .now))
        }
        let timeline = timeline
        let intake: @Sendable () async -> Void = {
            var lastDue = ContinuousClock.now
            await withDiscardingTaskGroup { reordered in
                for await (push, fate, now) in arrivals {
                    guard case .deliver(let after, let copies, let reorder) = fate else {
                        Self.publish(fate, of: push, late: .zero, on: timeline)
                        continue
                    }
                    let due = max(lastDue, now + after)
                    lastDue = due
                    Self.publish(fate, of: push, late: now.duration(to: due) + reorder, on: timeline)
                    for _ in 0..<copies {
                        guard reorder > .zero else {
                            release.yield((push, due))
                            continue
                        }
                        reordered.addTask {
                            guard (try? await Task.sleep(until: due + reorder, clock: .continuous)) != nil else {
                                return
                            }
                            release.yield((push, .now))
                        }
                    }
                }
            }
            release.finish()
        }
        let recorder = recorder
        let connection = recorder?.connectionID()
        let delivery: @Sendable () async -> Void = {
            for await (push, due) in releases {
                if due > .now, (try? await Task.sleep(until: due, clock: .continuous)) == nil { break }
                let recording = recorder.map { Self.record(push, token: token, connection: connection, into: $0) }
                await deliver(push)
                recording?.head(status: 200, statusText: "OK", headers: [])
                recording?.finish()
            }
        }
        // The registration's: close() cancels and awaits it.
        let work = Task {
            await withDiscardingTaskGroup { both in
                both.addTask { await intake() }
                both.addTask { await delivery() }
            }
        }
        // Registered while no change of reachability is under way, so that a later change sees this
        // token and an earlier one has already set the state it starts from.
        reachabilityUpdates.withLock { _ in
            registrations.withLock {
                $0.append(Registration(token: token, arrivals: arrival, work: work))
            }
            if !link.withLock({ $0.online }) { endpoint.setOnline(token, false) }
        }
        return token
    }

    /// The device's network went down or came back: APNs stores what it accepts meanwhile.
    public func setReachable(_ reachable: Bool) async {
        reachabilityUpdates.withLock { _ in
            let online = link.withLock { state in
                state.reachable = reachable
                return state.online
            }
            setOnline(online)
        }
    }

    /// The `apns-device` link's condition from now on. Down (or a profile that loses everything), the
    /// device's connection to APNs is lost and APNs stores what it accepts; up again, it delivers what
    /// it kept. Pushes already on their way keep the fate they were given.
    public func setCondition(_ condition: LinkCondition) {
        reachabilityUpdates.withLock { _ in
            let (was, now) = link.withLock { state in
                let was = state.online
                state.condition = condition
                return (was, state.online)
            }
            if was != now { setOnline(now) }
        }
    }

    /// Tells the service about every registered token. Called under ``reachabilityUpdates``, so that
    /// changes reach the service in the order they were made.
    private func setOnline(_ online: Bool) {
        for token in registrations.withLock({ $0.map(\.token) }) { endpoint.setOnline(token, online) }
    }

    public func unregisterDevice(token: String) async {
        endpoint.unregister(token)
    }

    /// Ends every device's delivery: pushes not yet handed over (held by the link's delay too) are
    /// dropped, a push being handed over finishes first.
    public func close() async {
        let all = registrations.withLock { registrations in
            defer { registrations.removeAll() }
            return registrations
        }
        for registration in all {
            registration.arrivals.finish()
            registration.work.cancel()
        }
        for registration in all { await registration.work.value }
    }

    /// What the link did to `push`, on the timeline (a delivered push `late` that long); nothing when it
    /// passed untouched.
    private static func publish(
        _ fate: PushLinkRule.Fate, of push: IncomingPush, late: Duration, on timeline: Timeline?
    ) {
        guard let timeline else { return }
        let link = NetworkLink.apnsDevice.rawValue
        switch fate {
        case .dropped(let why):
            timeline.publish(.networkPushDropped, source: "network", ["link": link, "apnsId": push.apnsId, "why": why])
        case .deliver(_, let copies, _):
            if late > .zero {
                timeline.publish(
                    .networkPushDelayed, source: "network",
                    ["link": link, "apnsId": push.apnsId, "delay": "\(late.inMilliseconds) ms"])
            }
            if copies > 1 {
                timeline.publish(.networkPushDuplicated, source: "network", ["link": link, "apnsId": push.apnsId])
            }
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded.
    fileprivate var inMilliseconds: Int64 { Int64((self / .milliseconds(1)).rounded()) }
}

extension PushChannel {
    /// A delivery as an exchange: the notification as APNs hands it to the device (its headers and
    /// payload), answered when the device has taken it.
    fileprivate static func record(
        _ push: IncomingPush, token: String, connection: String?, into recorder: CassetteRecorder
    ) -> ExchangeRecording {
        var headers = [
            (name: "apns-id", value: push.apnsId), (name: "apns-topic", value: push.topic),
            (name: "apns-push-type", value: push.pushType), (name: "apns-priority", value: "\(push.priority)"),
        ]
        if let collapseId = push.collapseId { headers.append((name: "apns-collapse-id", value: collapseId)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = (try? encoder.encode(push.payload)).map { String(decoding: $0, as: UTF8.self) }
        return recorder.exchange(
            service: "device", link: "apns→device", connection: connection, method: "POST",
            url: "apns://device/3/device/\(token)", httpVersion: "HTTP/2", headers: headers, requestBody: payload,
            requestMimeType: "application/json")
    }
}
