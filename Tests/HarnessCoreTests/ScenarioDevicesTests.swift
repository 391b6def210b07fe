import DeviceSimulator
import Foundation
import HarnessCore
import Testing

/// A scenario's named devices in harness.yml, and steps that name them: a test per rule of
/// docs/harness-yml.md's "Several devices".
@Suite struct ScenarioDevicesTests {
    func file(devices: String?, steps: String) -> String {
        """
        version: 1
        services:
          device: {backgroundPushBudget: 3s}
        apps:
          chat: {bundleId: com.example.chat, command: [chat]}
        scenarios:
          one:
            device: {lowPowerMode: true}
        \(devices.map { "    devices: \($0)" } ?? "")
            steps:
        \(steps)
        """
    }

    func scenario(devices: String?, steps: String) throws -> Scenario {
        try #require(
            ConfigurationLoader.parse(file(devices: devices, steps: steps), file: "harness.yml").scenarios.first)
    }

    @Test func aListNamesTheDevicesAndStepsNameOneOrEach() throws {
        let read = try scenario(
            devices: "[alice, bob]",
            steps: """
                      - each.launch: chat
                      - alice.tap: {app: chat, button: Send}
                      - bob.lock
                      - bob.network: offline
                      - waitFor: {event: app.log, where: {device: bob}, count: 2, timeout: 5s}
                      - push: {where: {deviceType: ios}, data: {alert: hi}}
                """)
        #expect(read.devices.map(\.name) == ["alice", "bob"])
        #expect(read.deviceNames == ["alice", "bob"])
        #expect(
            read.steps.map(\.description) == [
                "each device: launch chat", "alice: tap Send in chat", "bob: lock", "bob: network offline",
                "waitFor 2× app.log {device: bob} (5.0 seconds)", "push through Parse",
            ])
        #expect(read.launchedApp == "chat")
        // Each device has the scenario's device block over the services' one.
        #expect(
            read.devices.allSatisfy {
                $0.configuration.pushPolicy.lowPowerMode && $0.configuration.backgroundPushBudget == .seconds(3)
            })
    }

    @Test func aMappingGivesADeviceItsOwnSettings() throws {
        let read = try scenario(
            devices: "{alice: ~, bob: {backgroundAppRefresh: false}}", steps: "      - alice.launch: chat")
        #expect(read.devices.map(\.name) == ["alice", "bob"])
        #expect(read.devices[0].configuration.pushPolicy.backgroundAppRefresh)
        #expect(!read.devices[1].configuration.pushPolicy.backgroundAppRefresh)
        #expect(read.devices[1].configuration.pushPolicy.lowPowerMode, "the scenario's block is under the device's own")
    }

    @Test func aNumberNamesThemDevice1ToN() throws {
        let read = try scenario(devices: "3", steps: "      - device-3.launch: chat")
        #expect(read.devices.map(\.name) == ["device-1", "device-2", "device-3"])
    }

    @Test func aScenarioWithoutDevicesKeepsTodaysSyntax() throws {
        let read = try scenario(devices: nil, steps: "      - launch: chat\n      - lock")
        #expect(read.devices.isEmpty)
        #expect(read.deviceNames == [ScenarioDevice.single])
        #expect(read.steps.map(\.description) == ["launch chat", "lock"])
    }

    @Test(
        arguments: [
            (
                "[alice, bob]", "      - launch: chat",
                "this scenario has devices (alice, bob): say which, as alice.launch or each.launch"
            ),
            ("[alice, bob]", "      - lock", "say which, as alice.lock or each.lock"),
            (
                "[alice]", "      - alice.waitFor: {event: app.log}",
                "waitFor is not a step on a device: write it without 'alice.'"
            ),
            ("[alice]", "      - alice.push: {data: {alert: x}}", "push is not a step on a device"),
            (
                "[alice]", "      - carol.launch: chat",
                "'carol' is not a device of this scenario; its devices: alice (or each"
            ),
            (nil, "      - alice.launch: chat", "'alice' is not a device of this scenario: declare devices"),
            ("[alice, alice]", "      - alice.launch: chat", "'alice' is named twice"),
            ("[each]", "      - each.launch: chat", "'each' means every device"),
            ("[a.b]", "      - launch: chat", "no '.'"),
            ("0", "      - launch: chat", "must be between 1 and 100"),
            ("101", "      - launch: chat", "must be between 1 and 100"),
            ("[]", "      - launch: chat", "a scenario has 1 to 100 devices"),
            ("{alice: {colour: red}}", "      - alice.launch: chat", "unknown key 'colour'"),
            ("[alice]", "      - waitFor: {event: app.log, count: 0}", "must be between 1 and"),
            (
                "[alice]", "      - alice.launch: chat\n    expect: {files: [{path: a, device: carol}]}",
                "no device named 'carol' in this scenario; devices: alice"
            ),
            (
                nil, "      - launch: chat\n    expect: {files: [{path: a, device: alice}]}",
                "'device' names one of the scenario's devices, and this scenario declares none"
            ),
        ] as [(String?, String, String)])
    func badDevicesAndStepsAreRefusedWithWhatAndWhere(devices: String?, steps: String, message: String) throws {
        let error = try #require(configurationError(file(devices: devices, steps: steps)))
        #expect(error.description.contains(message), "\(error)")
        #expect(error.keyPath.hasPrefix("scenarios.one."), "\(error)")
        #expect(error.line != nil, "\(error)")
    }

    @Test func aFileExpectationNamesTheDeviceItIsLookedFor() throws {
        let read = try scenario(
            devices: "[alice, bob]",
            steps: "      - each.launch: chat\n    expect: {files: [{path: a}, {path: b, device: bob}]}")
        #expect(read.expectation.files.map(\.device) == [nil, "bob"])
    }

    @Test func anAppReplacedByAnotherIsReplacedOnEveryDevice() throws {
        let read = try scenario(devices: "[alice]", steps: "      - alice.launch: chat\n      - each.crash: chat")
        let replaced = read.steps.map { $0.replacingApp("chat", with: "chat-fixed") }
        #expect(replaced.map(\.description) == ["alice: launch chat-fixed", "each device: crash chat-fixed"])
        #expect(replaced.map(\.app) == ["chat-fixed", "chat-fixed"])
    }
}
