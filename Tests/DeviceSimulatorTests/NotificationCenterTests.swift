import DeviceProtocol
import Foundation
import HarnessTimeline
import PushChannel
import TestSupport
import Testing

@testable import DeviceSimulator

/// The notification centre's rules on an installed app that is not running (no process needed):
/// ios.md 1.4's replacement by identifier, the 64 soonest-firing pending requests, delivery while
/// the app is not on screen.
@Suite struct NotificationCenterTests {
    /// APNs is not involved here: registering is refused.
    struct NoPushServiceHere: Error {}

    struct NoPushService: PushRegistry {
        func registerDevice(topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void) async throws
            -> String
        {
            throw NoPushServiceHere()
        }
        func setReachable(_ reachable: Bool) async {}
        func unregisterDevice(token: String) async {}
    }

    func device() async throws -> (DeviceSimulator, Timeline) {
        let directory = try PackagePaths.temporaryDirectory()
        let timeline = Timeline()
        let device = DeviceSimulator(
            configuration: DeviceConfiguration(
                dataDirectory: directory, socketPath: directory.appendingPathComponent("device.sock").path),
            timeline: timeline, pushRegistry: NoPushService())
        try await device.install(
            InstalledApp(
                bundleId: "com.example.app", command: ["/bin/true"], workingDirectory: directory, backgroundModes: []))
        return (device, timeline)
    }

    @Test func theSystemKeepsTheSoonestFiring64() async throws {
        let (device, timeline) = try await device()
        for index in 1...70 {
            try await device.addNotificationRequest(
                "com.example.app",
                NotificationRequestParams(identifier: "n\(index)", body: "\(index)", timeInterval: Double(3600 + index))
            )
        }
        let discarded = timeline.events.filter { $0.kind == .notificationDiscarded }.compactMap { $0["identifier"] }
        #expect(discarded == (65...70).map { "n\($0)" })
        #expect(await device.pendingNotificationCount("com.example.app") == 64)
        // An earlier-firing request pushes the latest one out.
        try await device.addNotificationRequest(
            "com.example.app", NotificationRequestParams(identifier: "soon", timeInterval: 10))
        #expect(timeline.events.last { $0.kind == .notificationDiscarded }?["identifier"] == "n64")
        await device.shutdown()
    }

    @Test func aRequestWithAPendingIdentifierReplacesIt() async throws {
        let (device, timeline) = try await device()
        try await device.addNotificationRequest(
            "com.example.app", NotificationRequestParams(identifier: "same", body: "first", timeInterval: 600))
        try await device.addNotificationRequest(
            "com.example.app", NotificationRequestParams(identifier: "same", body: "second", timeInterval: 600))
        let scheduled = timeline.events.filter { $0.kind == .notificationScheduled }
        #expect(scheduled.map { $0["replaced"] } == ["false", "true"])
        #expect(await device.pendingNotificationCount("com.example.app") == 1)
        await device.shutdown()
    }

    @Test func aBadTriggerIsRefused() async throws {
        let (device, _) = try await device()
        await #expect(throws: RPCError.self) {
            try await device.addNotificationRequest(
                "com.example.app", NotificationRequestParams(identifier: "x", timeInterval: 0))
        }
        await device.shutdown()
    }

    @Test func offScreenTheSystemShowsItAndAppliesTheBadge() async throws {
        let (device, timeline) = try await device()
        try await device.addNotificationRequest(
            "com.example.app", NotificationRequestParams(identifier: "now", title: "T", body: "B", badge: 3))
        let delivered = try await timeline.waitFor("the delivery", timeout: .seconds(10)) {
            $0.kind == .appLocalNotification
        }
        #expect(delivered["presentation"] == "system")
        #expect(timeline.events.contains { $0.kind == .notificationShown && $0["identifier"] == "now" })
        #expect(await device.badge(of: "com.example.app") == 3)
        await device.shutdown()
    }
}

/// The device never throws away a refusal of SpringBoard's state machine: a move it attempts that the
/// machine refuses leaves the state and is published.
@Suite struct LifecycleRefusalTests {
    @Test func aRefusedMoveKeepsTheStateAndIsPublished() async throws {
        let (device, timeline) = try await NotificationCenterTests().device()
        let moved = await device.move("com.example.app", .suspend)
        #expect(moved == nil)
        #expect(await device.state(of: "com.example.app") == .notRunning(.neverLaunched))
        let refused = try #require(timeline.events.last { $0.kind == .lifecycleRefused })
        #expect(refused["bundleId"] == "com.example.app")
        #expect(refused["event"] == "suspend")
        #expect(refused["why"] == "only an app running in the background is suspended")
        #expect(!timeline.events.contains { $0.kind == .appStateChanged })
        await device.shutdown()
    }
}
