import DeviceProtocol
import Foundation
import HarnessTimeline
import PushChannel
import TestSupport
import Testing

@testable import DeviceSimulator

/// The held-push rows of ios.md's push table on an app that is not running, so no process is
/// launched: P7 (only the newest held push is kept), P10 and P11 (why a wake is held), P12 (launches
/// deferred after a reboot).
@Suite struct HeldPushTests {
    func device(_ configure: (inout DeviceConfiguration) -> Void) async throws -> (DeviceSimulator, Timeline) {
        let directory = try PackagePaths.temporaryDirectory()
        var configuration = DeviceConfiguration(
            dataDirectory: directory, socketPath: directory.appendingPathComponent("device.sock").path)
        configure(&configuration)
        let timeline = Timeline()
        let device = DeviceSimulator(
            configuration: configuration, timeline: timeline, pushRegistry: NotificationCenterTests.NoPushService())
        try await device.install(
            InstalledApp(
                bundleId: "com.example.app", command: ["/bin/false"], workingDirectory: directory,
                backgroundModes: ["remote-notification"]))
        return (device, timeline)
    }

    func silentPush(_ id: String) -> IncomingPush {
        IncomingPush(
            apnsId: id, topic: "com.example.app", pushType: "background", priority: 5,
            payload: ["aps": ["content-available": 1]])
    }

    func events(_ timeline: Timeline, _ kind: EventKind) -> [EventAttributes] {
        timeline.events.filter { $0.kind == kind }.map(\.attributes)
    }

    @Test func p7AndP11OnlyTheNewestPushHeldForBackgroundAppRefreshOffIsKept() async throws {
        let (device, timeline) = try await device { $0.pushPolicy.backgroundAppRefresh = false }
        await device.receive(silentPush("A"), for: "com.example.app")
        await device.receive(silentPush("B"), for: "com.example.app")
        let held = events(timeline, .pushHeld)
        #expect(held.map { $0["apnsId"] } == ["A", "B"])
        #expect(held.allSatisfy { $0["reason"] == "Background App Refresh is off" })
        let discarded = events(timeline, .pushDiscarded)
        #expect(discarded.map { $0["apnsId"] } == ["A"])
        #expect(discarded.first?["reason"]?.contains("only the newest held push is kept") == true)
        #expect(events(timeline, .appLaunched).isEmpty, "the app was not launched")
        await device.shutdown()
    }

    @Test func p10ASpentBudgetHoldsTheLaunch() async throws {
        let (device, timeline) = try await device { $0.pushPolicy.wakesPerHour = 0 }
        await device.receive(silentPush("A"), for: "com.example.app")
        let held = try #require(events(timeline, .pushHeld).first)
        #expect(held["reason"]?.contains("0 background wakes in the last hour") == true)
        #expect(events(timeline, .appLaunched).isEmpty)
        await device.shutdown()
    }

    @Test func p12LaunchesForPushesWaitAfterAReboot() async throws {
        let (device, timeline) = try await device { $0.bootLaunchDelay = .seconds(300) }
        await device.reboot()
        await device.receive(silentPush("A"), for: "com.example.app")
        let held = try #require(events(timeline, .pushHeld).first)
        #expect(held["reason"]?.contains("ThunderingHerdPolicy") == true)
        #expect(events(timeline, .appLaunched).isEmpty)
        await device.shutdown()
    }
}
