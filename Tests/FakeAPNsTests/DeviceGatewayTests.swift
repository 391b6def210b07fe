import FakeAPNs
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// What FakeAPNs does with accepted notifications, driven through its control API's own entry points
/// on a real server and a device that records what reaches it.
@Suite struct DeviceGatewayTests {
    func start(_ configure: (inout FakeAPNsConfiguration) -> Void = { _ in }) async throws -> (FakeAPNsServer, Timeline)
    {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        configure(&configuration)
        let timeline = Timeline()
        return (try await FakeAPNsServer.start(configuration: configuration, timeline: timeline), timeline)
    }

    /// A silent push, as the background push type requires.
    func push(_ server: FakeAPNsServer, _ token: String, headers: [String] = []) async throws -> String {
        try await server.curlPush(to: token, headers: ["apns-push-type: background", "apns-priority: 5"] + headers)
    }

    @Test func expirationZeroIsNeverStoredForAnOfflineDevice() async throws {
        let (server, timeline) = try await start()
        let token = server.gateway.register(topic: "com.example.app") { _ in }
        server.gateway.setOnline(token, false)
        let status = try await push(server, token, headers: ["apns-expiration: 0"])
        server.gateway.setOnline(token, true)
        await server.close()
        #expect(status == "200")
        #expect(
            timeline.events.contains {
                $0.kind == "apns.discarded" && $0["reason"]?.contains("apns-expiration 0") == true
            })
        #expect(!timeline.events.contains { $0.kind == .apnsDelivered })
        #expect(server.log.entries(deviceToken: token).last?.decision == "discarded")
    }

    @Test func anExpirationAlreadyPastIsDiscarded() async throws {
        let (server, timeline) = try await start()
        let token = server.gateway.register(topic: "com.example.app") { _ in }
        server.gateway.setOnline(token, false)
        _ = try await push(server, token, headers: ["apns-expiration: \(Int(Date().timeIntervalSince1970) - 60)"])
        await server.close()
        #expect(
            timeline.events.contains { $0.kind == "apns.discarded" && $0["reason"] == "apns-expiration already passed" }
        )
    }

    @Test func anOnlineDeviceGetsItAtOnceAndTheLogSaysWhen() async throws {
        let (server, timeline) = try await start()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = server.gateway.register(topic: "com.example.app") { delivered.continuation.yield($0) }
        _ = try await push(server, token, headers: ["apns-collapse-id: apod"])
        let stream = delivered.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery") { await stream.first { _ in true } })
        await server.close()
        #expect(notification.collapseId == "apod")
        #expect(notification.payload == #"{"aps":{"content-available":1}}"#)
        let entry = try #require(server.log.entries(deviceToken: token).last)
        #expect(entry.decision == "delivered")
        #expect(entry.deliveredAt == entry.receivedAt, "delivered at once, in the request's own moment")
        #expect(entry.headers["authorization"] == "bearer <redacted>")
        #expect(entry.headers["apns-collapse-id"] == "apod")
        #expect(timeline.events.contains { $0.kind == .apnsDelivered && $0["stored"] == "false" })
    }

    /// The delivery's event reads a copy without the payload; the device must still get the payload.
    @Test func aStoredNotificationReachesItsDeviceWholeWhenItComesBack() async throws {
        let (server, timeline) = try await start()
        let delivered = AsyncStream.makeStream(of: AcceptedNotification.self)
        let token = server.gateway.register(topic: "com.example.app") { delivered.continuation.yield($0) }
        server.gateway.setOnline(token, false)
        let body = #"{"aps":{"content-available":1},"episode":"stored while offline"}"#
        _ = try await server.curlPush(
            to: token, headers: ["apns-push-type: background", "apns-priority: 5"], body: body)
        server.gateway.setOnline(token, true)
        let stream = delivered.stream
        let notification = try #require(
            try await withDeadline(.seconds(30), "delivery") { await stream.first { _ in true } })
        await server.close()
        #expect(notification.payload == body)
        #expect(timeline.events.contains { $0.kind == .apnsDelivered && $0["stored"] == "true" })
        #expect(server.log.entries(deviceToken: token).last?.decision == "delivered")
    }

    @Test func anInjectedDelayedSuccessStillDelivers() async throws {
        let (server, _) = try await start()
        let token = server.gateway.register(topic: "com.example.app") { _ in }
        server.faults.inject(.init(status: 200, delayMilliseconds: 300, count: 1), for: token)
        let started = ContinuousClock.now
        let status = try await push(server, token)
        let elapsed = started.duration(to: .now)
        await server.close()
        #expect(status == "200")
        #expect(elapsed >= .milliseconds(300))
    }

    @Test func aRateLimitAnswers429OnceTheBurstIsSpent() async throws {
        let (server, _) = try await start()
        let token = server.gateway.register(topic: "com.example.app") { _ in }
        server.faults.limit(token, to: .init(requestsPerSecond: 0.01, burst: 1))
        let first = try await push(server, token)
        let second = try await push(server, token)
        await server.close()
        #expect(first == "200")
        #expect(second == "429")
        #expect(server.log.entries(deviceToken: token).last?.reason == "TooManyRequests")
    }

    /// Issue 32: with several devices, APNs's events named only a token. A device registered with a
    /// name has every event about its token name it: registered, accepted, delivered, stored, online.
    @Test func aNamedDevicesEventsNameIt() async throws {
        let (server, timeline) = try await start()
        let alice = server.gateway.register(topic: "com.example.app", device: "alice") { _ in }
        let unnamed = server.gateway.register(topic: "com.example.app") { _ in }
        _ = try await push(server, alice)
        server.gateway.setOnline(alice, false)
        _ = try await push(server, alice)
        server.gateway.setOnline(alice, true)
        _ = try await push(server, unnamed)
        await server.close()
        let about = { (token: String) in timeline.events.filter { $0["deviceToken"] == token } }
        #expect(
            Set(about(alice).map(\.kind.rawValue)) == [
                "apns.device.registered", "apns.request.accepted", "apns.delivered", "apns.device.offline",
                "apns.stored", "apns.device.online",
            ])
        #expect(about(alice).allSatisfy { $0["device"] == "alice" }, "\(about(alice))")
        #expect(about(unnamed).allSatisfy { $0["device"] == nil }, "\(about(unnamed))")
        #expect(server.gateway.deviceName(of: alice) == "alice" && server.gateway.deviceName(of: unnamed) == nil)
    }
}
