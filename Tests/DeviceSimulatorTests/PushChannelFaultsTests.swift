import DeviceProtocol
import HarnessTimeline
import NetworkConditions
import PushChannel
import Testing

/// The push channel under the `apns-device` link's conditions, with a service of its own: pushes kept
/// in order, delayed never early, duplicated, dropped, and the link down as the device unreachable.
@Suite(.timeLimit(.minutes(1))) struct PushChannelFaultsTests {
    /// A push service that hands pushes over when told and records what it is told of reachability.
    final class Service: PushServiceEndpoint, Sendable {
        let deliver = LockedState<(@Sendable (IncomingPush) -> Void)?>(nil)
        let online = LockedState<[Bool]>([])

        func register(topic: String, deliver: @escaping @Sendable (IncomingPush) -> Void) -> String {
            self.deliver.withLock { $0 = deliver }
            return "token"
        }
        func setOnline(_ token: String, _ online: Bool) { self.online.withLock { $0.append(online) } }
        func unregister(_ token: String) {}

        func send(_ id: String) {
            let push = IncomingPush(
                apnsId: id, topic: "t", pushType: "background", priority: 5,
                payload: ["aps": ["content-available": 1]])
            deliver.withLock { $0 }?(push)
        }
    }

    /// A channel with a registered device whose deliveries arrive, with their time, on the stream.
    static func channel(timeline: Timeline = Timeline()) async throws -> (
        PushChannel, Service, AsyncStream<(String, ContinuousClock.Instant)>
    ) {
        let service = Service()
        let channel = PushChannel(endpoint: service, timeline: timeline, seed: 1)
        let (arrivals, arrival) = AsyncStream.makeStream(of: (String, ContinuousClock.Instant).self)
        _ = try await channel.registerDevice(topic: "t") { arrival.yield(($0.apnsId, .now)) }
        return (channel, service, arrivals)
    }

    static func take(_ count: Int, from arrivals: AsyncStream<(String, ContinuousClock.Instant)>) async
        -> [(String, ContinuousClock.Instant)]
    {
        var taken: [(String, ContinuousClock.Instant)] = []
        for await arrival in arrivals {
            taken.append(arrival)
            if taken.count == count { break }
        }
        return taken
    }

    @Test func delayedPushesKeepTheirOrderAndAreNeverEarly() async throws {
        let timeline = Timeline()
        let (channel, service, arrivals) = try await Self.channel(timeline: timeline)
        channel.setCondition(LinkCondition(push: PushFaults(delay: .fixed(.milliseconds(200)))))
        let sent = ContinuousClock.now
        for id in ["a", "b", "c"] { service.send(id) }
        let got = await Self.take(3, from: arrivals)
        #expect(got.map(\.0) == ["a", "b", "c"])
        for (_, at) in got { #expect(at >= sent + .milliseconds(200)) }
        let delayed = timeline.events.filter { $0.kind == .networkPushDelayed }
        #expect(delayed.count == 3)
        #expect(delayed.allSatisfy { $0.attributes["link"] == "apns-device" })
        await channel.close()
    }

    @Test func aDrawnDelayNeverLetsALaterPushOvertake() async throws {
        let (channel, service, arrivals) = try await Self.channel()
        // Drawn between 0 and 300 ms each: without the channel's order, later ones would often win.
        channel.setCondition(LinkCondition(push: PushFaults(delay: .uniform(.zero, .milliseconds(300)))))
        let ids = (0..<20).map { "p\($0)" }
        for id in ids { service.send(id) }
        #expect(await Self.take(20, from: arrivals).map(\.0) == ids)
        await channel.close()
    }

    @Test func duplicatesFollowTheirPushAndDroppedOnesNeverCome() async throws {
        let timeline = Timeline()
        let (channel, service, arrivals) = try await Self.channel(timeline: timeline)
        channel.setCondition(LinkCondition(push: PushFaults(dropPerMillion: 1_000_000)))
        service.send("lost")
        channel.setCondition(LinkCondition(push: PushFaults(duplicatePerMillion: 1_000_000)))
        service.send("twice")
        channel.setCondition(.clear)
        service.send("once")
        // Order is kept, so a delivered "lost" would have come first.
        #expect(await Self.take(3, from: arrivals).map(\.0) == ["twice", "twice", "once"])
        #expect(timeline.events.filter { $0.kind == .networkPushDropped }.map { $0.attributes["apnsId"] } == ["lost"])
        #expect(
            timeline.events.filter { $0.kind == .networkPushDuplicated }.map { $0.attributes["apnsId"] } == ["twice"])
        await channel.close()
    }

    @Test func theLinkDownIsTheDeviceUnreachableForAPNs() async throws {
        let (channel, service, _) = try await Self.channel()
        channel.setCondition(LinkCondition(down: true))
        channel.setCondition(LinkCondition(down: true, push: PushFaults(dropPerMillion: 1)))  // still down: nothing new
        channel.setCondition(.clear)
        #expect(service.online.withLock { $0 } == [false, true])
        // The device's own network off keeps it unreachable whatever the link does.
        await channel.setReachable(false)
        channel.setCondition(LinkCondition(down: true))
        channel.setCondition(.clear)
        await channel.setReachable(true)
        #expect(service.online.withLock { $0 } == [false, true, false, true])
        // A profile that loses everything is the connection lost too.
        let lost = try NetworkProfiles().named("100% Loss")
        channel.setCondition(LinkCondition(profile: lost))
        #expect(service.online.withLock { $0 }.last == false)
        await channel.close()
    }

    /// A service that hands over what it stored as soon as it hears the device is back, on the
    /// caller's thread, as FakeAPNs's gateway does.
    final class StoringService: PushServiceEndpoint, Sendable {
        let deliver = LockedState<(@Sendable (IncomingPush) -> Void)?>(nil)
        let stored = LockedState<[IncomingPush]>([])
        let online = LockedState(true)

        func register(topic: String, deliver: @escaping @Sendable (IncomingPush) -> Void) -> String {
            self.deliver.withLock { $0 = deliver }
            return "token"
        }
        func setOnline(_ token: String, _ online: Bool) {
            self.online.withLock { $0 = online }
            guard online else { return }
            for push in stored.withLock({ stored in
                defer { stored.removeAll() }; return stored
            }) {
                deliver.withLock { $0 }?(push)
            }
        }
        func unregister(_ token: String) {}
        func send(_ id: String) {
            let push = IncomingPush(
                apnsId: id, topic: "t", pushType: "background", priority: 5, payload: ["aps": ["content-available": 1]])
            if online.withLock({ $0 }) { deliver.withLock { $0 }?(push) } else { stored.withLock { $0.append(push) } }
        }
    }

    @Test func storedPushesHandedOverAsTheDeviceComesBackArrive() async throws {
        let service = StoringService()
        let channel = PushChannel(endpoint: service, seed: 1)
        let (arrivals, arrival) = AsyncStream.makeStream(of: String.self)
        _ = try await channel.registerDevice(topic: "t") { arrival.yield($0.apnsId) }
        // Under a profile (the push channel's condition decides each push's fate as it is handed over).
        channel.setCondition(LinkCondition(profile: try NetworkProfiles().named("3G")))
        await channel.setReachable(false)
        service.send("kept")
        await channel.setReachable(true)
        channel.setCondition(LinkCondition(down: true))
        service.send("kept too")
        channel.setCondition(.clear)
        var got: [String] = []
        for await id in arrivals {
            got.append(id)
            if got.count == 2 { break }
        }
        #expect(got == ["kept", "kept too"])
        await channel.close()
    }
}
