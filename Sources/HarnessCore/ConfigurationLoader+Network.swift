import FaultProxy
import Foundation
import NetworkConditions
import Toxics

/// harness.yml's `network` blocks (the services', a scenario's, a step's) and the user's profiles.
extension ConfigurationLoader {
    /// The services' `network`: the user's profiles first (the other keys may name them), then a
    /// profile on the device's links, single links, and the seed of the network's draws.
    static var servicesNetworkKeys: KeyTable<ServicesConfiguration> {
        KeyTable([
            "profiles": { value, services in
                for (name, entry) in try value.namedEntries() {
                    do {
                        try services.networkProfiles.add(try readProfile(name, entry))
                    } catch let error as NetworkError {
                        throw entry.error(error.message)
                    }
                }
            },
            "profile": { $1.network.profile = try readProfileChoice($0, $1.networkProfiles) },
            "links": { $1.network.links = try readLinks($0, $1.networkProfiles) },
            "seed": { $1.networkSeed = UInt64(try $0.int(range: 0...Int.max)) },
        ])
    }

    /// A scenario's or a step's `network`: a profile on the device's links, and single links.
    static func readNetwork(_ reader: YAMLReader, _ profiles: NetworkProfiles) throws -> NetworkSettings {
        var settings = NetworkSettings()
        try KeyTable<NetworkSettings>([
            "profile": { $1.profile = try readProfileChoice($0, profiles) },
            "links": { $1.links = try readLinks($0, profiles) },
        ]).read(reader, into: &settings)
        return settings
    }

    /// `{down: {bandwidth: 240kbps, delay: 400ms, loss: 1%}, up: {…}, dnsDelay: 3s}`.
    static func readProfile(_ name: String, _ reader: YAMLReader) throws -> NetworkProfile {
        func direction(_ value: YAMLReader) throws -> NetworkProfile.Direction {
            try KeyTable<NetworkProfile.Direction>([
                "bandwidth": { value, direction in
                    direction.bitsPerSecond = try value.nullOr { try networkValue($0, NetworkQuantity.bandwidth) }
                },
                "delay": { $1.delay = try $0.duration(atMost: .seconds(86_400)) },
                "loss": { $1.lossPerMillion = try networkValue($0, NetworkQuantity.loss) },
            ]).overlay(value, on: .init())
        }
        var profile = NetworkProfile(name: name, down: .init(), up: .init())
        try KeyTable<NetworkProfile>([
            "down": { $1.down = try direction($0) },
            "up": { $1.up = try direction($0) },
            "dnsDelay": { $1.dnsDelay = try $0.duration(atMost: .seconds(86_400)) },
        ]).read(reader, into: &profile)
        return profile
    }

    /// A profile's name, or `none`.
    static func readProfileChoice(_ reader: YAMLReader, _ profiles: NetworkProfiles) throws -> ProfileChoice {
        if reader.node.null != nil { return .none }
        let name = try reader.string()
        if name == "none" { return .none }
        return .some(try networkValue(reader, profiles.named))
    }

    /// `links`: each link by name, with a profile's name, `down`, `clear`, or a mapping.
    ///
    /// `device` (the phone's links) and `all` set every link of theirs to a profile, `down` or `clear`;
    /// `device` wins over `all`, and a single link's own entry over both.
    static func readLinks(_ reader: YAMLReader, _ profiles: NetworkProfiles) throws -> [NetworkLink: LinkSetting] {
        var links: [NetworkLink: LinkSetting] = [:]
        let entries = try reader.namedEntries()
        for group in ["all", "device"] {
            for (name, value) in entries where name.lowercased() == group {
                if case .mapping = value.node { _ = try value.mapping(known: ["profile", "down"]) }
                let setting = try readLink(.appParse, value, profiles)
                for link in try NetworkLink.group(group) { links[link] = setting }
            }
        }
        var given: Set<NetworkLink> = []
        for (name, value) in entries where !["device", "all"].contains(name.lowercased()) {
            let link: NetworkLink
            do {
                link = try NetworkLink.named(name)
            } catch {
                throw value.error(error.message)
            }
            guard given.insert(link).inserted else { throw value.error("\(link.rawValue) is given twice") }
            links[link] = try readLink(link, value, profiles)
        }
        return links
    }

    private static func readLink(_ link: NetworkLink, _ reader: YAMLReader, _ profiles: NetworkProfiles) throws
        -> LinkSetting
    {
        if case .scalar = reader.node {
            switch try reader.string() {
            case "down": return LinkSetting(down: true)
            case "clear", "up": return LinkSetting(profile: .none)
            default:
                do {
                    return LinkSetting(profile: .some(try profiles.named(try reader.string())))
                } catch let error as NetworkError {
                    throw reader.error("\(error.message); or down, clear")
                }
            }
        }
        var setting = LinkSetting()
        func pushOnly(_ read: @escaping (YAMLReader, inout LinkSetting) throws -> Void) -> KeyTable<LinkSetting>.Read {
            { value, setting in
                guard link == .apnsDevice else {
                    throw value.error("only the push channel (apns-device) takes this; \(link.rawValue) takes toxics")
                }
                try read(value, &setting)
            }
        }
        try KeyTable<LinkSetting>([
            "profile": { $1.profile = try readProfileChoice($0, profiles) },
            "down": { $1.down = try $0.bool() },
            "toxics": { value, setting in
                guard link.carriesTCP else {
                    throw value.error(
                        "the push channel (apns-device) carries no TCP: it takes delay, drop, duplicate and reorder")
                }
                setting.toxics = try readToxics(value)
            },
            "delay": pushOnly { $1.push.delay = try readPushDelay($0) },
            "drop": pushOnly { $1.push.dropPerMillion = try networkValue($0, NetworkQuantity.loss) },
            "duplicate": pushOnly { $1.push.duplicatePerMillion = try networkValue($0, NetworkQuantity.loss) },
            "reorder": pushOnly { $1.push.reorderWindow = try $0.duration(atMost: .seconds(86_400)) },
        ]).read(reader, into: &setting)
        return setting
    }

    /// `90s`, `{min: 1s, max: 5s}` or `{mean: 2s}`.
    private static func readPushDelay(_ reader: YAMLReader) throws -> PushDelay {
        if case .scalar = reader.node { return .fixed(try reader.duration(atMost: .seconds(86_400))) }
        let fields = try reader.mapping(known: ["min", "max", "mean"])
        switch (fields["min"], fields["max"], fields["mean"]) {
        case (let low?, let high?, nil):
            let (from, to) = (try low.duration(atMost: .seconds(86_400)), try high.duration(atMost: .seconds(86_400)))
            guard from <= to else { throw reader.error("min must not be more than max") }
            return .uniform(from, to)
        case (nil, nil, let mean?): return .exponential(mean: try mean.duration(atMost: .seconds(86_400)))
        default: throw reader.error("a delay is a duration, {min: 1s, max: 5s} or {mean: 2s}")
        }
    }

    /// Toxiproxy's toxics, as its API takes them: `{type: latency, stream: downstream, attributes: {latency: 500}}`.
    private static func readToxics(_ reader: YAMLReader) throws -> [Toxic] {
        var toxics: [Toxic] = []
        for entry in try reader.sequence() {
            let toxic: Toxic
            do {
                toxic = try Toxic.decoding(try JSONSerialization.data(withJSONObject: try entry.json()))
            } catch let error as ToxiproxyError {
                throw entry.error(error.message)
            }
            guard !toxic.name.hasPrefix("profile_") else {
                throw entry.error("toxic names starting profile_ are the profile's; name it otherwise")
            }
            guard !toxics.contains(where: { $0.name == toxic.name }) else {
                throw entry.error("two toxics named \(toxic.name) on one link; give each its own name")
            }
            toxics.append(toxic)
        }
        // The proxy takes 100; a profile brings up to 7 of its own.
        guard toxics.count <= maximumOwnToxics else {
            throw reader.error("a link takes at most \(maximumOwnToxics) toxics of its own")
        }
        return toxics
    }

    /// A link's own toxics, beside a profile's (at most 7) within the fault proxy's 100.
    static let maximumOwnToxics = FaultProxy.limits.toxics - 10

    /// `read` on the reader's text, its ``NetworkError`` made an error at the reader's place.
    private static func networkValue<Value>(_ reader: YAMLReader, _ read: (String) throws(NetworkError) -> Value) throws
        -> Value
    {
        let text = try reader.string()
        do {
            return try read(text)
        } catch {
            throw reader.error(error.message)
        }
    }
}
