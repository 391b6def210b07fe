/// A hop of the push chain that faults can be put on, by the name harness.yml, the command line and
/// the timeline give it. Every link but the push channel carries TCP, and the harness puts a fault
/// proxy on it; the push channel (`apns-device`) is the device's own connection to APNs, whose faults
/// the push channel decides.
public enum NetworkLink: String, Sendable, CaseIterable, Comparable {
    /// The app's requests to Parse (its installation, its queries).
    case appParse = "app-parse"
    /// The backend's (or a `push` step's) requests to Parse's REST API.
    case backendParse = "backend-parse"
    /// Parse's HTTP/2 connection to FakeAPNs, as a push provider.
    case parseAPNs = "parse-apns"
    /// APNs to the device: pushes delivered.
    case apnsDevice = "apns-device"
    /// The device's transfer daemon (nsurlsessiond) to the media server: the app's URLSession tasks.
    case transferMedia = "transfer-media"
    /// The app's own connections to the media server, outside URLSession's daemon.
    case appMedia = "app-media"

    /// The links that run over the phone's radio: what a profile on "the device" conditions.
    public static let deviceLinks: [NetworkLink] = [.appParse, .appMedia, .transferMedia, .apnsDevice]

    /// Whether the link carries TCP (every one but the push channel).
    public var carriesTCP: Bool { self != .apnsDevice }

    public static func < (lhs: NetworkLink, rhs: NetworkLink) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    /// The link named `text`: its name, or the same with an arrow (`app→parse`, `app->parse`).
    public static func named(_ text: String) throws(NetworkError) -> NetworkLink {
        let name = text.lowercased().replacingOccurrences(of: "→", with: "-").replacingOccurrences(of: "->", with: "-")
        guard let link = NetworkLink(rawValue: name) else {
            throw .unknownLink(String(text.prefix(100)), orGroup: false)
        }
        return link
    }

    /// The links a name stands for: one link, `device` (the phone's links) or `all`.
    public static func group(_ text: String) throws(NetworkError) -> [NetworkLink] {
        switch text.lowercased() {
        case "device": return deviceLinks
        case "all": return allCases
        default:
            guard let link = try? named(text) else { throw .unknownLink(String(text.prefix(100)), orGroup: true) }
            return [link]
        }
    }
}

/// A network setting that cannot be used; ``message`` says why in words that name the setting.
public enum NetworkError: Error, Equatable, CustomStringConvertible {
    /// No link by that name (`orGroup`: nor `device` or `all`, where a group may stand).
    case unknownLink(String, orGroup: Bool)
    /// No profile by that name; `known` are the profiles there are.
    case unknownProfile(String, known: [String])
    /// A profile's name of no character or more than 100.
    case profileNameLength
    /// A profile's name starting with `.` or holding `/`, `\` or control characters.
    case profileNameUnsafe
    /// A profile named `none`.
    case profileNameNone
    /// A profile's name already taken (as profiles are looked up) by another.
    case profileNameTaken(String, by: String)
    case notABandwidth(String)
    /// A bandwidth under 8 kbps or over 100 Gbps.
    case bandwidthOutOfRange(String)
    case notALoss(String)

    public var message: String {
        switch self {
        case .unknownLink(let text, let orGroup):
            "unknown link '\(text)'; links: \(NetworkLink.allCases.map(\.rawValue).joined(separator: ", "))"
                + (orGroup ? "; or device, or all" : "")
        case .unknownProfile(let name, let known):
            "unknown network profile '\(name)'; profiles: \(known.joined(separator: ", "))"
        case .profileNameLength: "a profile's name must have 1 to 100 characters"
        case .profileNameUnsafe:
            "a profile's name may not start with '.' or hold '/', '\\' or control characters: it names report folders"
        case .profileNameNone: "'none' stands for no profile; name yours otherwise"
        case .profileNameTaken(let name, let taken): "the profile name '\(name)' is taken by '\(taken)'"
        case .notABandwidth(let text): "'\(text)' is not a bandwidth; write 780kbps, 50Mbps, 1.5Gbps or bits per second"
        case .bandwidthOutOfRange(let text): "a bandwidth must be from 8kbps to 100Gbps, not '\(text)'"
        case .notALoss(let text): "a loss is a percentage from 0% to 100% (10%, 0.1%), not '\(text)'"
        }
    }

    public var description: String { message }
}
