import Toxics

/// A profile as a setting gives it: not given (the level below decides), none, or one.
public enum ProfileChoice: Sendable, Equatable {
    case inherit
    case none
    case some(NetworkProfile)
}

/// One link's setting as harness.yml (or a step) writes it.
public struct LinkSetting: Sendable, Equatable {
    /// Its own profile; `inherit`: a device link takes the device's profile.
    public var profile: ProfileChoice = .inherit
    public var down = false
    public var toxics: [Toxic] = []
    public var push = PushFaults()

    public init(
        profile: ProfileChoice = .inherit, down: Bool = false, toxics: [Toxic] = [],
        push: PushFaults = .init()
    ) {
        self.profile = profile
        self.down = down
        self.toxics = toxics
        self.push = push
    }
}

/// The network of a run, as the services, a scenario, a step or the command line set it: a profile on
/// the device's links, and settings of single links, which replace what the level below said of that link.
public struct NetworkSettings: Sendable, Equatable {
    /// The profile on the device's links (`NetworkLink.deviceLinks`).
    public var profile: ProfileChoice = .inherit
    public var links: [NetworkLink: LinkSetting] = [:]

    public init(profile: ProfileChoice = .inherit, links: [NetworkLink: LinkSetting] = [:]) {
        self.profile = profile
        self.links = links
    }

    /// These settings with `other`'s over them: its profile if it gives one, its links' settings in
    /// place of these links' settings.
    public func overlaid(by other: NetworkSettings) -> NetworkSettings {
        var result = self
        if other.profile != .inherit { result.profile = other.profile }
        result.links.merge(other.links) { _, new in new }
        return result
    }

    /// The links these settings say something of.
    public var touched: Set<NetworkLink> {
        var links = Set(links.keys)
        if profile != .inherit { links.formUnion(NetworkLink.deviceLinks) }
        return links
    }

    /// What `link` does under these settings.
    public func condition(of link: NetworkLink) -> LinkCondition {
        let setting = links[link] ?? LinkSetting()
        var profile: NetworkProfile?
        switch setting.profile {
        case .some(let own): profile = own
        case .none: profile = nil
        case .inherit:
            if NetworkLink.deviceLinks.contains(link), case .some(let device) = self.profile { profile = device }
        }
        return LinkCondition(
            profile: profile, down: setting.down, toxics: link.carriesTCP ? setting.toxics : [],
            push: link.carriesTCP ? PushFaults() : setting.push)
    }
}

extension NetworkSettings: CustomStringConvertible {
    /// `profile EDGE, parse-apns down, apns-device delay 90s`.
    public var description: String {
        var parts: [String] = []
        switch profile {
        case .inherit: break
        case .none: parts.append("profile none")
        case .some(let profile): parts.append("profile \(profile.name)")
        }
        for link in links.keys.sorted() {
            guard let setting = links[link] else { continue }
            var said: [String] = []
            if setting.down { said.append("down") }
            switch setting.profile {
            case .inherit: break
            case .none: said.append("no profile")
            case .some(let profile): said.append(profile.name)
            }
            said += setting.toxics.map(\.name) + setting.push.summary
            parts.append("\(link.rawValue) \(said.isEmpty ? "clear" : said.joined(separator: " + "))")
        }
        return parts.isEmpty ? "unchanged" : parts.joined(separator: ", ")
    }
}
