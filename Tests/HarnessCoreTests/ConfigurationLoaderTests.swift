import Foundation
import HarnessCore
import NetworkConditions
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

    func error(_ text: String) -> ConfigurationError? { configurationError(text) }

    @Test func readsAValidFile() throws {
        let configuration = try ConfigurationLoader.parse(valid, file: "harness.yml")
        #expect(configuration.services.media.port == 0)
        #expect(configuration.services.media.throttleBytesPerSecond == 100_000)
        #expect(configuration.services.device.backgroundPushBudget == .seconds(3))
        #expect(configuration.services.apns.port == 2197)
        #expect(configuration.apps["nasa-tv"]?.backgroundModes == ["remote-notification"])
        let scenario = try #require(configuration.scenario(named: "first"))
        #expect(scenario.steps.count == 3)
        #expect(scenario.expectation.chain.map(\.kind) == ["parse.push.accepted", "transfer.completed"])
        #expect(scenario.expectation.never.map(\.kind) == ["device.watchdog.killed"])
        #expect(scenario.expectation.within == .seconds(10))
    }

    @Test(arguments: [
        ("", nil as Int??), ("media: {throttle: 20KB/s}", .some(.some(20_000))),
        ("media: {throttle: null}", .some(nil)),
    ])
    func aScenarioKeepsReplacesOrRemovesTheMediaThrottle(line: String, expected: Int??) throws {
        let text = valid.replacingOccurrences(
            of: "    description: d\n", with: "    description: d\n" + (line.isEmpty ? "" : "    \(line)\n"))
        let scenario = try #require(try ConfigurationLoader.parse(text, file: "harness.yml").scenario(named: "first"))
        switch (scenario.mediaThrottle, expected) {
        case (.inherit, nil): break
        case (.set(let throttle), .some(let value)): #expect(throttle == value)
        default: Issue.record("\(line): \(scenario.mediaThrottle), not \(String(describing: expected))")
        }
    }

    @Test func anUnknownKeyIsNamedWithItsLine() throws {
        let text = valid.replacingOccurrences(of: "    port: 0\n", with: "    port: 0\n    prot: 1\n")
        let problem = try #require(error(text))
        #expect(problem.line == 5)
        #expect(problem.keyPath == "services.media.prot")
        #expect(problem.description.hasPrefix("harness.yml:5:"))
        #expect(problem.description.contains("unknown key 'prot'"))
    }

    /// Numbers that used to trap when converted, and strings that name files and folders, are errors
    /// with the key's line, never a crash or a file outside the run's folders.
    @Test(arguments: [
        ("backgroundPushBudget: 3s", "backgroundPushBudget: infs", "expected a duration"),
        ("backgroundPushBudget: 3s", "backgroundPushBudget: 1e300", "a duration is at most 366d"),
        ("backgroundPushBudget: 3s", "backgroundPushBudget: 400d", "a duration is at most 366d"),
        ("backgroundPushBudget: 3s", "backgroundPushBudget: nan", "expected a duration"),
        ("throttle: 100KB/s", "throttle: 1e300KB/s", "a rate is at most 1099511627776 bytes per second"),
        ("throttle: 100KB/s", "throttle: infMB/s", "expected a rate"),
        ("throttle: 100KB/s", "throttle: 9223372036854775807", "a rate is at most"),
        ("bundleId: com.razeware.NASA-TV", "bundleId: ../../etc", "bundleId must be 1 to 155 letters"),
        ("  first:\n", "  ../../escape:\n", "cannot be used as a name"),
        ("within: 10s", "within: 10s\n      files: [{path: ../../../etc/passwd}]", "a relative path without '..'"),
        ("within: 10s", "within: 10s\n      files: [{path: /etc/passwd}]", "a relative path without '..'"),
        ("  media:\n", "  apns: {keyId: ../../k}\n  media:\n", "letters and digits, as Apple's team and key ids are"),
    ])
    func outOfRangeNumbersAndEscapingNamesAreErrors(_ original: String, _ replacement: String, _ message: String) {
        let text = valid.replacingOccurrences(of: original, with: replacement)
        #expect(text != valid, "the edit applies")
        let problem = error(text)
        #expect(problem?.message.contains(message) == true, "\(problem?.description ?? "no error")")
    }

    @Test func badValuesAreErrors() throws {
        #expect(error(valid.replacingOccurrences(of: "100KB/s", with: "fast"))?.keyPath == "services.media.throttle")
        #expect(
            error(valid.replacingOccurrences(of: "backgroundPushBudget: 3s", with: "backgroundPushBudget: soon"))?
                .keyPath
                == "services.device.backgroundPushBudget")
        #expect(
            error(valid.replacingOccurrences(of: "port: 0", with: "port: 70000"))?.message.contains(
                "between 0 and 65535") == true)
        #expect(
            error(valid.replacingOccurrences(of: "- launch: nasa-tv", with: "- launch: nope"))?.message.contains(
                "no app named 'nope'") == true)
        #expect(
            error(valid.replacingOccurrences(of: "version: 1", with: "version: 2"))?.message.contains("only version 1")
                == true)
        #expect(
            error(valid.replacingOccurrences(of: "remote-notification]", with: "teleport]"))?.message.contains(
                "unknown background mode") == true)
    }

    @Test func mediaFaultsAreReadForTheServicesAndForAScenario() throws {
        let text = valid.replacingOccurrences(
            of: "    throttle: 100KB/s\n",
            with: "    throttle: 100KB/s\n    faults:\n      - {fault: status, status: 503, retryAfter: 2, count: 1}\n"
        )
        .replacingOccurrences(
            of: "    description: d\n",
            with:
                "    description: d\n    media:\n      faults:\n        - {fault: reset, afterBytes: 123456, path: /photos/*, count: 1}\n        - {fault: fin, afterFraction: 0.5, probability: 0.25, seed: 7}\n"
        )
        let configuration = try ConfigurationLoader.parse(text, file: "harness.yml")
        #expect(configuration.services.media.faults.map(\.fault) == [.status])
        let paced = try ConfigurationLoader.parse(
            valid.replacingOccurrences(
                of: "    throttle: 100KB/s\n",
                with:
                    "    throttle: 100KB/s\n    serverThrottle: 1MB/s\n    burst: 65536\n    latency: 80ms\n    firstByteDelay: 1s\n"
            ),
            file: "harness.yml")
        #expect(
            paced.services.media.settings.serverBytesPerSecond == 1_000_000
                && paced.services.media.settings.burstBytes == 65_536)
        #expect(
            paced.services.media.settings.latencyMilliseconds == 80
                && paced.services.media.settings.firstByteDelayMilliseconds == 1000)
        #expect(configuration.services.media.faults.first?.retryAfter == 2)
        let scenario = try #require(configuration.scenario(named: "first"))
        #expect(scenario.mediaFaults.map(\.fault) == [.reset, .fin])
        #expect(scenario.mediaFaults[0].afterBytes == 123_456 && scenario.mediaFaults[0].path == "/photos/*")
        #expect(scenario.mediaFaults[1].probability == 0.25 && scenario.mediaFaults[1].seed == 7)
    }

    @Test func badMediaFaultsSayWhatAndWhere() throws {
        func faulty(_ rule: String) -> ConfigurationError? {
            error(
                valid.replacingOccurrences(
                    of: "    throttle: 100KB/s\n", with: "    throttle: 100KB/s\n    faults:\n      - \(rule)\n"))
        }
        let unknown = try #require(faulty("{fault: explode}"))
        #expect(unknown.keyPath == "services.media.faults[0].fault")
        #expect(unknown.message.contains("unknown fault 'explode'") && unknown.message.contains("closeBeforeHeaders"))
        #expect(faulty("{fault: reset}")?.message.contains("afterBytes") == true)
        #expect(faulty("{fault: fin, afterFraction: 2}")?.keyPath == "services.media.faults[0].afterFraction")
        #expect(faulty("{fault: fin, afterBytes: 1, when: now}")?.message.contains("unknown key 'when'") == true)
        #expect(faulty("{path: /x}")?.message.contains("needs 'fault'") == true)
    }

    @Test func aStepHasExactlyOneAction() throws {
        let text = valid.replacingOccurrences(of: "- launch: nasa-tv", with: "- {launch: nasa-tv, home: nasa-tv}")
        #expect(error(text)?.message.contains("exactly one of") == true)
    }

    @Test func lifeCycleStepsAndTransferTimingAreRead() throws {
        let text = valid.replacingOccurrences(
            of: "      - launch: nasa-tv\n",
            with:
                "      - launch: nasa-tv\n      - crash: nasa-tv\n      - jetsam: nasa-tv\n      - forceQuit: nasa-tv\n"
        ).replacingOccurrences(
            of: "    backgroundPushBudget: 3s\n",
            with: "    backgroundPushBudget: 3s\n    transferRetryDelay: 250ms\n    transferResourceTimeout: 1h\n")
        let configuration = try ConfigurationLoader.parse(text, file: "harness.yml")
        let steps = try #require(configuration.scenario(named: "first")).steps
        #expect(
            steps.prefix(4).map(\.description) == [
                "launch nasa-tv", "crash nasa-tv", "jetsam nasa-tv", "forceQuit nasa-tv",
            ])
        #expect(configuration.services.device.transfers.retryDelay == .milliseconds(250))
        #expect(configuration.services.device.transfers.resourceTimeout == .seconds(3600))
        let unknown = valid.replacingOccurrences(of: "      - launch: nasa-tv\n", with: "      - crash: podcasts\n")
        #expect(error(unknown)?.message.contains("no app named 'podcasts'") == true)
    }

    @Test func pushPolicySettingsAreRead() throws {
        let text = valid.replacingOccurrences(
            of: "    backgroundPushBudget: 3s\n",
            with:
                "    backgroundPushBudget: 3s\n    lowPowerMode: true\n    backgroundAppRefresh: false\n    pushBudget: {perHour: 2, perDay: 12}\n"
        )
        let policy = try ConfigurationLoader.parse(text, file: "harness.yml").services.device.pushPolicy
        #expect(policy.lowPowerMode && !policy.backgroundAppRefresh)
        #expect(policy.wakesPerHour == 2 && policy.wakesPerDay == 12)
        let permissive = valid.replacingOccurrences(
            of: "    backgroundPushBudget: 3s\n", with: "    backgroundPushBudget: 3s\n    pushBudget: permissive\n")
        #expect(
            try ConfigurationLoader.parse(permissive, file: "harness.yml").services.device.pushPolicy.wakesPerHour
                == nil)
        let wrong = valid.replacingOccurrences(
            of: "    backgroundPushBudget: 3s\n", with: "    backgroundPushBudget: 3s\n    lowPowerMode: yes\n")
        #expect(error(wrong)?.message.contains("expected true or false, found 'yes'") == true)
        let unknown = valid.replacingOccurrences(
            of: "    backgroundPushBudget: 3s\n", with: "    backgroundPushBudget: 3s\n    pushBudget: {perMinute: 1}\n"
        )
        #expect(error(unknown)?.message.contains("perMinute") == true)
    }

    @Test func throttlesTakeNetworkLinkConditionerProfiles() throws {
        let edge = valid.replacingOccurrences(of: "throttle: 100KB/s", with: "throttle: EDGE")
        #expect(
            try ConfigurationLoader.parse(edge, file: "harness.yml").services.media.throttleBytesPerSecond == 30_000)
        let threeG = valid.replacingOccurrences(of: "throttle: 100KB/s", with: "throttle: 3g")
        #expect(
            try ConfigurationLoader.parse(threeG, file: "harness.yml").services.media.throttleBytesPerSecond == 97_500)
        let unknown = valid.replacingOccurrences(of: "throttle: 100KB/s", with: "throttle: 5G")
        #expect(error(unknown)?.message.contains("a profile (GPRS, EDGE, 3G") == true)
    }

    @Test func eventuallyCountsAndSettleAreRead() throws {
        let text = valid.replacingOccurrences(
            of: "      never: [device.watchdog.killed]",
            with: """
                      never: [device.watchdog.killed]
                      eventually: [app.localNotification]
                      counts:
                        - {event: device.push.received, count: 1}
                        - {event: transfer.progress, where: {task: "1"}, atLeast: 2}
                      settle: 2s
                """)
        let expectation = try #require(ConfigurationLoader.parse(text, file: "harness.yml").scenario(named: "first"))
            .expectation
        #expect(expectation.eventually.map(\.kind) == ["app.localNotification"])
        #expect(
            expectation.counts.map(\.description) == [
                "device.push.received exactly 1 time", "transfer.progress {task: 1} at least 2 times",
            ])
        #expect(expectation.settle == .seconds(2))
        let both = text.replacingOccurrences(of: "count: 1}", with: "count: 1, atMost: 3}")
        #expect(error(both)?.message.contains("either 'count' or 'atLeast'/'atMost'") == true)
    }

    @Test func jsonMatchesReadNestedKeysAndSayWhereTheyAreWrong() throws {
        let text = valid.replacingOccurrences(
            of: "        - parse.push.accepted\n",
            with:
                "        - device.push.received: {payload: {json: {photoTitle: Nebula, aps: {content-available: 1}}}}\n"
        )
        let expectation = try #require(ConfigurationLoader.parse(text, file: "harness.yml").scenario(named: "first"))
            .expectation
        #expect(
            expectation.chain[0].description
                == "device.push.received {payload: JSON with {photoTitle: Nebula, aps: {content-available: 1}}}")
        let scalar = valid.replacingOccurrences(
            of: "        - parse.push.accepted\n", with: "        - device.push.received: {payload: {json: Nebula}}\n")
        let problem = try #require(error(scalar))
        #expect(problem.description.contains("harness.yml:23:50"), "\(problem)")
        #expect(problem.message.contains("write the keys the JSON object must hold"), "\(problem)")
    }

    @Test func networkSettingsAreReadLevelByLevel() throws {
        let text = valid.replacingOccurrences(
            of: "  device:\n    backgroundPushBudget: 3s\n",
            with: """
                  device:
                    backgroundPushBudget: 3s
                  network:
                    profiles:
                      my-edge: {down: {bandwidth: 200kbps, delay: 400ms, loss: 1%}, up: {bandwidth: 100kbps}, dnsDelay: 1s}
                    profile: my-edge
                    links:
                      parse-apns: down
                      backend-parse: 3G
                      apns-device: {delay: {min: 1s, max: 2s}, drop: 10%, duplicate: 0.5%, reorder: 3s}
                      app→media: {toxics: [{type: latency, attributes: {latency: 250}}]}
                    seed: 7

                """
        ).replacingOccurrences(
            of: "    description: d\n",
            with: """
                    description: d
                    network: {profile: LTE, links: {parse-apns: clear}}

                """
        ).replacingOccurrences(
            of: "      - launch: nasa-tv\n",
            with: "      - launch: nasa-tv\n      - network: {profile: 100% Loss, links: {transfer-media: down}}\n")
        let configuration = try ConfigurationLoader.parse(text, file: "harness.yml")
        let services = configuration.services
        let mine = try services.networkProfiles.named("my-edge")
        #expect(mine.down == .init(bitsPerSecond: 200_000, delay: .milliseconds(400), lossPerMillion: 10_000))
        #expect(mine.up == .init(bitsPerSecond: 100_000) && mine.dnsDelay == .seconds(1))
        #expect(services.network.profile == .some(mine))
        #expect(services.network.condition(of: .parseAPNs) == LinkCondition(down: true))
        #expect(services.network.condition(of: .backendParse).profile?.name == "3G")
        #expect(
            services.network.condition(of: .apnsDevice)
                == LinkCondition(
                    profile: mine,
                    push: PushFaults(
                        delay: .uniform(.seconds(1), .seconds(2)), dropPerMillion: 100_000, duplicatePerMillion: 5000,
                        reorderWindow: .seconds(3))))
        #expect(services.network.condition(of: .appMedia).toxics.map(\.kind) == [.latency])
        #expect(services.networkSeed == 7)
        let scenario = try #require(configuration.scenario(named: "first"))
        let run = scenario.overlay(on: services)
        #expect(run.network.condition(of: .appParse).profile?.name == "LTE")
        #expect(run.network.condition(of: .parseAPNs) == .clear)
        // The step's link is in play from the start, so that the step can change it.
        #expect(run.networkLinksInPlay == Set(NetworkLink.deviceLinks))
        guard case .conditions(let change) = scenario.steps[1] else {
            Issue.record("a network mapping is a change of conditions: \(scenario.steps[1])")
            return
        }
        #expect(change.description == "profile 100% Loss, transfer-media down")
        // A matrix cell puts its profile on the device's links, and keeps the scenario's links.
        let cell = scenario.under(profile: try services.networkProfiles.named("EDGE"))
        #expect(cell.name == "first[EDGE]")
        #expect(cell.overlay(on: services).network.condition(of: .transferMedia).profile?.name == "EDGE")
        #expect(cell.overlay(on: services).network.condition(of: .parseAPNs) == .clear)
        #expect(scenario.under(profile: nil).overlay(on: services).network.condition(of: .appParse) == .clear)
    }

    @Test(arguments: [
        ("    profile: 5G", "services.network.profile", "unknown network profile '5G'; profiles: 3G, DSL, EDGE"),
        ("    links: {phone-parse: down}", "services.network.links.phone-parse", "unknown link 'phone-parse'"),
        ("    links: {app-parse: {drop: 5%}}", "services.network.links.app-parse.drop", "only the push channel"),
        (
            "    links: {apns-device: {toxics: []}}", "services.network.links.apns-device.toxics",
            "the push channel (apns-device) carries no TCP"
        ),
        (
            "    links: {app-parse: {toxics: [{type: bandwidth, attributes: {rate: -1}}]}}",
            "services.network.links.app-parse.toxics[0]",
            "attributes.rate of a bandwidth toxic must be from 1 to 10000000, not -1"
        ),
        (
            "    links: {app-parse: {toxics: [{type: latency}, {type: latency}]}}",
            "services.network.links.app-parse.toxics[1]", "two toxics named latency_downstream"
        ),
        (
            "    links: {app-parse: {toxics: [{name: profile_x, type: latency}]}}",
            "services.network.links.app-parse.toxics[0]", "toxic names starting profile_"
        ),
        ("    links: {apns-device: {drop: 120%}}", "services.network.links.apns-device.drop", "from 0% to 100%"),
        (
            "    links: {apns-device: {delay: {min: 5s, max: 1s}}}", "services.network.links.apns-device.delay",
            "min must not be more than max"
        ),
        ("    links: {apns-device: {delay: 2d}}", "services.network.links.apns-device.delay", "at most"),
        (
            "    profiles: {x: {down: {bandwidth: 10Tbps}}}", "services.network.profiles.x.down.bandwidth",
            "not a bandwidth"
        ),
        ("    profiles: {3g: {down: {delay: 1s}}}", "services.network.profiles.3g", "is taken by '3G'"),
        ("    seed: -1", "services.network.seed", "must be between 0 and"),
    ])
    func badNetworkSettingsSayWhatAndWhere(_ line: String, _ keyPath: String, _ message: String) throws {
        let text = valid.replacingOccurrences(
            of: "  device:\n    backgroundPushBudget: 3s\n",
            with: "  device:\n    backgroundPushBudget: 3s\n  network:\n\(line)\n")
        let problem = try #require(error(text))
        #expect(problem.keyPath == keyPath, "\(problem)")
        #expect(problem.message.contains(message), "\(problem)")
        #expect(problem.line != nil)
    }

    @Test func aGroupSetsEveryLinkOfItsAndASingleLinkWins() throws {
        let text = valid.replacingOccurrences(
            of: "  device:\n    backgroundPushBudget: 3s\n",
            with:
                "  device:\n    backgroundPushBudget: 3s\n  network:\n    links: {parse-apns: clear, all: EDGE, device: down}\n"
        )
        let network = try ConfigurationLoader.parse(text, file: "harness.yml").services.network
        #expect(network.condition(of: .transferMedia) == LinkCondition(down: true))
        #expect(network.condition(of: .apnsDevice) == LinkCondition(down: true))
        #expect(network.condition(of: .backendParse).profile?.name == "EDGE")
        #expect(network.condition(of: .parseAPNs) == .clear)
        let toxic = valid.replacingOccurrences(
            of: "  device:\n    backgroundPushBudget: 3s\n",
            with: "  device:\n    backgroundPushBudget: 3s\n  network:\n    links: {all: {toxics: []}}\n")
        #expect(error(toxic)?.message.contains("unknown key 'toxics'") == true)
    }

    @Test func aNetworkStepIsAnInterfaceOrAMapping() throws {
        let word = valid.replacingOccurrences(of: "- launch: nasa-tv", with: "- launch: nasa-tv\n      - network: EDGE")
        let problem = try #require(error(word))
        #expect(
            problem.message.contains("network must be wifi, cellular or offline, or a mapping such as {profile: EDGE}"))
        let unknown = valid.replacingOccurrences(
            of: "- launch: nasa-tv", with: "- launch: nasa-tv\n      - network: {profile: Dialup}")
        #expect(error(unknown)?.keyPath == "scenarios.first.steps[1].network.profile")
    }
}
