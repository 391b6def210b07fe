import Foundation
import HarnessCore
import Testing

@Suite struct ConfigurationLoaderTests {
    let valid = """
        version: 1
        services:
          media:
            port: 0
            throttle: 100KB/s
          device:
            backgroundPushBudget: 3s
        apps:
          nasa-tv:
            bundleId: com.razeware.NASA-TV
            command: [.build/debug/nasa-tv]
            backgroundModes: [remote-notification]
        scenarios:
          first:
            description: d
            steps:
              - launch: nasa-tv
              - waitFor: {event: parse.installation.saved, timeout: 5s}
              - push: {where: {deviceType: ios}, data: {content-available: 1}}
            expect:
              within: 10s
              chain:
                - parse.push.accepted
                - transfer.completed: {sha256: {sha256OfFixture: photos/dailyphoto.jpg}}
              never: [device.watchdog.killed]
        """

    func error(_ text: String) -> ConfigurationError? {
        do {
            _ = try ConfigurationLoader.parse(text, file: "harness.yml")
            return nil
        } catch let error as ConfigurationError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func readsAValidFile() throws {
        let configuration = try ConfigurationLoader.parse(valid, file: "harness.yml")
        #expect(configuration.services.media.port == 0)
        #expect(configuration.services.media.throttle == 100_000)
        #expect(configuration.services.device.backgroundPushBudget == .seconds(3))
        #expect(configuration.services.apns.port == 2197)
        #expect(configuration.apps["nasa-tv"]?.backgroundModes == ["remote-notification"])
        let scenario = try #require(configuration.scenario(named: "first"))
        #expect(scenario.steps.count == 3)
        #expect(scenario.expectation.chain.map(\.kind) == ["parse.push.accepted", "transfer.completed"])
        #expect(scenario.expectation.never.map(\.kind) == ["device.watchdog.killed"])
        #expect(scenario.expectation.within == .seconds(10))
    }

    @Test func anUnknownKeyIsNamedWithItsLine() throws {
        let text = valid.replacingOccurrences(of: "    port: 0\n", with: "    port: 0\n    prot: 1\n")
        let problem = try #require(error(text))
        #expect(problem.line == 5)
        #expect(problem.keyPath == "services.media.prot")
        #expect(problem.description.hasPrefix("harness.yml:5:"))
        #expect(problem.description.contains("unknown key 'prot'"))
    }

    @Test func badValuesAreErrors() throws {
        #expect(error(valid.replacingOccurrences(of: "100KB/s", with: "fast"))?.keyPath == "services.media.throttle")
        #expect(error(valid.replacingOccurrences(of: "backgroundPushBudget: 3s", with: "backgroundPushBudget: soon"))?.keyPath
            == "services.device.backgroundPushBudget")
        #expect(error(valid.replacingOccurrences(of: "port: 0", with: "port: 70000"))?.message.contains("between 0 and 65535") == true)
        #expect(error(valid.replacingOccurrences(of: "- launch: nasa-tv", with: "- launch: nope"))?.message.contains("no app named 'nope'") == true)
        #expect(error(valid.replacingOccurrences(of: "version: 1", with: "version: 2"))?.message.contains("only version 1") == true)
        #expect(error(valid.replacingOccurrences(of: "remote-notification]", with: "teleport]"))?.message.contains("unknown background mode") == true)
    }

    @Test func aStepHasExactlyOneAction() throws {
        let text = valid.replacingOccurrences(of: "- launch: nasa-tv", with: "- {launch: nasa-tv, home: nasa-tv}")
        #expect(error(text)?.message.contains("exactly one of") == true)
    }
}
