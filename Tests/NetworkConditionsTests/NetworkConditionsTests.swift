import NetworkConditions
import Testing
import Toxics

/// Links, profiles and settings as values: a row per rule.
struct NetworkConditionsTests {
    @Test func linksAreNamedWithOrWithoutAnArrow() throws {
        #expect(try NetworkLink.named("app-parse") == .appParse)
        #expect(try NetworkLink.named("Parse→APNs") == .parseAPNs)
        #expect(try NetworkLink.named("transfer->media") == .transferMedia)
        let unknown = #expect(throws: NetworkError.self) { try NetworkLink.named("app-apns") }
        #expect(
            unknown?.message
                == "unknown link 'app-apns'; links: app-parse, backend-parse, parse-apns, apns-device, transfer-media, app-media"
        )
        #expect(try NetworkLink.group("device") == [.appParse, .appMedia, .transferMedia, .apnsDevice])
        #expect(try NetworkLink.group("ALL") == NetworkLink.allCases)
        let group = #expect(throws: NetworkError.self) { try NetworkLink.group("phone") }
        #expect(
            group?.message
                == "unknown link 'phone'; links: app-parse, backend-parse, parse-apns, apns-device, transfer-media, app-media; or device, or all"
        )
        #expect(!NetworkLink.apnsDevice.carriesTCP && NetworkLink.appMedia.carriesTCP)
    }

    @Test func profilesAreFoundWhateverTheSpellingAndUnknownOnesListTheKnown() throws {
        let profiles = NetworkProfiles()
        #expect(try profiles.named("edge").name == "EDGE")
        #expect(try profiles.named("very-bad-network").name == "Very Bad Network")
        #expect(try profiles.named("100-loss").name == "100% Loss")
        #expect(try profiles.named("wifi_802.11ac").name == "WiFi 802.11ac")
        #expect(throws: NetworkError.self) { try profiles.named("5G") }
        do {
            _ = try profiles.named("5G")
        } catch {
            #expect(error.message.hasPrefix("unknown network profile '5G'; profiles: 3G, DSL, EDGE, LTE"))
        }
        var mine = profiles
        let slow = NetworkProfile(name: "my slow", down: .init(bitsPerSecond: 64_000), up: .init())
        try mine.add(slow)
        #expect(try mine.named("MY-SLOW") == slow)
        #expect(throws: NetworkError.profileNameTaken("Edge", by: "EDGE")) {
            try mine.add(NetworkProfile(name: "Edge", down: .init(), up: .init()))
        }
    }

    @Test func publishedNumbersOfThePresets() throws {
        let profiles = NetworkProfiles()
        let rows: [(String, Int64?, Int64, Int64?, Int64, Int64)] = [
            // name, down bit/s, down ms, up bit/s, up ms, loss per million (both ways)
            ("3G", 780_000, 100, 330_000, 100, 0),
            ("DSL", 2_000_000, 5, 256_000, 5, 0),
            ("EDGE", 240_000, 400, 200_000, 440, 0),
            ("LTE", 50_000_000, 50, 10_000_000, 65, 0),
            ("WiFi", 40_000_000, 1, 33_000_000, 1, 0),
            ("Very Bad Network", 1_000_000, 500, 1_000_000, 500, 100_000),
            ("100% Loss", nil, 0, nil, 0, 1_000_000),
            ("3G Lossy", 780_000, 100, 330_000, 100, 10_000),
        ]
        for (name, downBits, downMs, upBits, upMs, loss) in rows {
            let profile = try profiles.named(name)
            #expect(profile.down.bitsPerSecond == downBits, "\(name)")
            #expect(profile.down.delay == .milliseconds(downMs), "\(name)")
            #expect(profile.up.bitsPerSecond == upBits, "\(name)")
            #expect(profile.up.delay == .milliseconds(upMs), "\(name)")
            #expect(profile.down.lossPerMillion == loss && profile.up.lossPerMillion == loss, "\(name)")
        }
        #expect(try profiles.named("High Latency DNS").dnsDelay == .seconds(3))
    }

    @Test func aProfileBecomesBandwidthLossAndDelayEachWay() throws {
        let profiles = NetworkProfiles()
        let edge = try profiles.named("EDGE").toxics
        #expect(
            edge == [
                Toxic(
                    name: "profile_bandwidth_downstream", kind: .bandwidth, stream: .downstream,
                    attributes: ["rate": 30]),
                Toxic(
                    name: "profile_latency_downstream", kind: .latency, stream: .downstream,
                    attributes: ["latency": 400]),
                Toxic(
                    name: "profile_bandwidth_upstream", kind: .bandwidth, stream: .upstream, attributes: ["rate": 25]),
                Toxic(
                    name: "profile_latency_upstream", kind: .latency, stream: .upstream, attributes: ["latency": 440]),
            ])
        let bad = try profiles.named("Very Bad Network").toxics.map(\.kind)
        #expect(bad == [.bandwidth, .loss, .latency, .bandwidth, .loss, .latency])
        let lost = try profiles.named("100% Loss")
        #expect(lost.losesEverything)
        #expect(lost.toxics.map { $0["per_million"] } == [1_000_000, 1_000_000])
        #expect(
            try profiles.named("High Latency DNS").toxics == [
                Toxic(
                    name: "profile_dns_delay_upstream", kind: .dnsDelay, stream: .upstream, attributes: ["delay": 3000])
            ])
        // A push of 240 bytes on EDGE: 400 ms, and 240 · 8 bits at 240 kbit/s (8 ms).
        #expect(try profiles.named("EDGE").pushDelay(bytes: 240) == .milliseconds(408))
    }

    @Test func quantitiesAreReadWithTheirUnitsAndBounded() throws {
        #expect(try NetworkQuantity.bandwidth("780kbps") == 780_000)
        #expect(try NetworkQuantity.bandwidth("1.5 Mbps") == 1_500_000)
        #expect(try NetworkQuantity.bandwidth("2Gbps") == 2_000_000_000)
        #expect(try NetworkQuantity.bandwidth("64000") == 64_000)
        for bad in ["fast", "-1kbps", "500bps", "200Gbps", "nan", "1e400kbps", ""] {
            #expect(throws: NetworkError.self, "\(bad)") { try NetworkQuantity.bandwidth(bad) }
        }
        #expect(try NetworkQuantity.loss("10%") == 100_000)
        #expect(try NetworkQuantity.loss("0.1%") == 1000)
        #expect(try NetworkQuantity.loss("100%") == 1_000_000)
        for bad in ["10", "101%", "-1%", "x%", "nan%"] {
            #expect(throws: NetworkError.self, "\(bad)") { try NetworkQuantity.loss(bad) }
        }
    }

    @Test func aLinkTakesItsOwnSettingOrTheDevicesProfile() throws {
        let profiles = NetworkProfiles()
        let edge = try profiles.named("EDGE")
        let lte = try profiles.named("LTE")
        let services = NetworkSettings(
            profile: .some(edge), links: [.parseAPNs: LinkSetting(down: true), .appMedia: LinkSetting(profile: .none)])
        #expect(services.condition(of: .transferMedia) == LinkCondition(profile: edge))
        #expect(services.condition(of: .apnsDevice) == LinkCondition(profile: edge))
        // Not one of the device's links: the device's profile is not its.
        #expect(services.condition(of: .backendParse) == .clear)
        #expect(services.condition(of: .parseAPNs) == LinkCondition(down: true))
        #expect(services.condition(of: .appMedia) == .clear)
        #expect(services.touched == Set(NetworkLink.deviceLinks + [.parseAPNs]))
        // A scenario's profile replaces the services'; its link settings replace theirs link by link.
        let scenario = NetworkSettings(profile: .some(lte), links: [.parseAPNs: LinkSetting()])
        let run = services.overlaid(by: scenario)
        #expect(run.condition(of: .appParse) == LinkCondition(profile: lte))
        #expect(run.condition(of: .parseAPNs) == .clear)
        #expect(run.condition(of: .appMedia) == .clear)
        // Push faults belong to the push channel, toxics to TCP links.
        let mixed = LinkSetting(toxics: [Toxic(kind: .latency)], push: PushFaults(dropPerMillion: 5))
        let settings = NetworkSettings(links: [.apnsDevice: mixed, .appParse: mixed])
        #expect(settings.condition(of: .apnsDevice) == LinkCondition(push: PushFaults(dropPerMillion: 5)))
        #expect(settings.condition(of: .appParse) == LinkCondition(toxics: [Toxic(kind: .latency)]))
    }

    @Test func summariesSayWhatTheLinkDoes() throws {
        let edge = try NetworkProfiles().named("EDGE")
        #expect(LinkCondition.clear.summary == "clear")
        #expect(LinkCondition(profile: edge, down: true).summary == "down + EDGE")
        #expect(
            LinkCondition(
                push: PushFaults(
                    delay: .uniform(.seconds(1), .milliseconds(1500)), dropPerMillion: 5000,
                    duplicatePerMillion: 100_000, reorderWindow: .milliseconds(250))
            ).summary == "delay 1s–1.5s + drop 0.5% + duplicate 10% + reorder 250ms")
    }
}

/// The push channel's rule: a row per fault.
struct PushLinkRuleTests {
    static func fates(_ condition: LinkCondition, count: Int = 200, seed: UInt64 = 1) -> [PushLinkRule.Fate] {
        var rule = PushLinkRule(seed: seed)
        return (0..<count).map { _ in rule.fate(ofPushOf: 200, under: condition) }
    }

    @Test func aClearLinkDeliversAtOnce() {
        #expect(Self.fates(.clear).allSatisfy { $0 == .deliver(after: .zero, copies: 1, reorder: .zero) })
    }

    @Test func dropTakesItsShareAndNoMore() {
        let all = Self.fates(LinkCondition(push: PushFaults(dropPerMillion: 1_000_000)))
        #expect(all.allSatisfy { $0 == .dropped(why: "the link drops 100% of pushes") })
        let some = Self.fates(LinkCondition(push: PushFaults(dropPerMillion: 250_000)), count: 4000)
        let dropped = some.filter { if case .dropped = $0 { true } else { false } }.count
        // A quarter of 4000, within six standard deviations (27 each).
        #expect(abs(dropped - 1000) < 165, "\(dropped)")
    }

    @Test func duplicateSendsTheSamePushTwice() {
        let fates = Self.fates(
            LinkCondition(push: PushFaults(delay: .fixed(.seconds(2)), duplicatePerMillion: 1_000_000)))
        #expect(fates.allSatisfy { $0 == .deliver(after: .seconds(2), copies: 2, reorder: .zero) })
    }

    @Test func delaysAreFixedOrDrawnWithinTheirRange() {
        #expect(
            Self.fates(LinkCondition(push: PushFaults(delay: .fixed(.seconds(90))))).allSatisfy {
                $0 == .deliver(after: .seconds(90), copies: 1, reorder: .zero)
            })
        for fate in Self.fates(LinkCondition(push: PushFaults(delay: .uniform(.seconds(1), .seconds(5))))) {
            guard case .deliver(let delay, 1, .zero) = fate else {
                Issue.record("\(fate)")
                continue
            }
            #expect(delay >= .seconds(1) && delay <= .seconds(5))
        }
        let drawn = Self.fates(LinkCondition(push: PushFaults(delay: .exponential(mean: .seconds(2)))), count: 4000)
            .compactMap { if case .deliver(let delay, _, _) = $0 { delay } else { nil } }
        let mean = drawn.reduce(Duration.zero, +) / drawn.count
        // The mean of 4000 draws of mean 2 s: within 0.2 s (six standard errors is 0.19 s).
        #expect(mean > .milliseconds(1800) && mean < .milliseconds(2200), "\(mean)")
        // The same seed, the same draws.
        #expect(
            Self.fates(LinkCondition(push: PushFaults(reorderWindow: .seconds(3))), seed: 9)
                == Self.fates(LinkCondition(push: PushFaults(reorderWindow: .seconds(3))), seed: 9))
    }

    @Test func aProfileDelaysByItsDownlinkAndItsLossByRetransmissions() throws {
        let profiles = NetworkProfiles()
        let edge = try profiles.named("EDGE")
        // 200 bytes at 240 kbit/s: 6.667 ms, after 400 ms.
        #expect(
            Self.fates(LinkCondition(profile: edge)).allSatisfy {
                $0 == .deliver(after: .microseconds(406_666), copies: 1, reorder: .zero)
            })
        // The reorder window is drawn apart from the delay, within it.
        for fate in Self.fates(LinkCondition(push: PushFaults(delay: .fixed(.seconds(1)), reorderWindow: .seconds(3))))
        {
            guard case .deliver(.seconds(1), 1, let reorder) = fate else {
                Issue.record("\(fate)")
                continue
            }
            #expect(reorder >= .zero && reorder < .seconds(3))
        }
        let bad = try profiles.named("Very Bad Network")
        let base = bad.pushDelay(bytes: 200)
        var late = 0
        for fate in Self.fates(LinkCondition(profile: bad), count: 2000) {
            guard case .deliver(let delay, 1, .zero) = fate else {
                Issue.record("loss on a TCP link delays, never drops: \(fate)")
                continue
            }
            let extra = delay - base
            // Each loss adds a retransmission wait of 200 ms, doubling: 0, 200, 600, 1400 ms…
            // (at 10 %, more than five losses in a row are one chance in a million)
            let waited = extra / .milliseconds(1)
            #expect([0, 200, 600, 1400, 3000, 6200].contains(waited), "\(waited)")
            if waited > 0 { late += 1 }
        }
        // 10 % of 2000 lost at least once: 200, within six standard deviations (80).
        #expect(abs(late - 200) < 80, "\(late)")
    }
}
