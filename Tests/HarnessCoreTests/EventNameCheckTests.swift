import HarnessCore
import Testing

/// A pattern that can never match is a check that can never fail: every event kind and attribute a
/// harness.yml names is checked against the event catalogue as the file is read.
struct EventNameCheckTests {
    static func scenario(_ expect: String, step: String = "- launch: a") -> String {
        """
        version: 1
        apps:
          a: {bundleId: com.example.a, command: [python3, app.py], backgroundModes: []}
        scenarios:
          s:
            steps:
              \(step)
            expect:
              \(expect)
        """
    }

    @Test func aMisspelledKindInNeverIsRefusedWithTheNearestName() throws {
        let error = try #require(configurationError(Self.scenario("never: [device.app.conected]")))
        #expect(error.line == 9)
        #expect(error.keyPath == "scenarios.s.expect.never[0]")
        #expect(
            error.message.hasPrefix("'device.app.conected' is no event kind (did you mean 'device.app.connected'?)"))
    }

    @Test func anAttributeTheKindNeverCarriesIsRefusedNamingThoseItDoes() throws {
        let error = try #require(
            configurationError(Self.scenario("chain: [{app.localNotification: {alertbody: Hello}}]")))
        #expect(
            error.message.contains(
                "app.localNotification has no attribute 'alertbody' (did you mean 'alertBody' or 'body'?)"))
    }

    @Test func waitForAndCountsAreCheckedToo() throws {
        let wait = try #require(
            configurationError(Self.scenario("within: 5s", step: "- waitFor: {event: parse.instalation.saved}")))
        #expect(wait.message.contains("did you mean 'parse.installation.saved'?"), "\(wait)")
        let count = try #require(
            configurationError(Self.scenario("counts: [{event: device.push.received, where: {color: red}}]")))
        #expect(count.message.contains("device.push.received has no attribute 'color'"), "\(count)")
    }

    @Test func aNamedDevicesAttributeAndKnownNamesRead() {
        #expect(
            configurationError(
                Self.scenario("chain: [{device.notification.shown: {device: bob, body: {contains: Hi}}}]")) == nil)
    }
}
