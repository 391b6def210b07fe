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
            throw NetworkError(
                "unknown link '\(text.prefix(100))'; links: \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return link
    }

    /// The links a name stands for: one link, `device` (the phone's links) or `all`.
    public static func group(_ text: String) throws(NetworkError) -> [NetworkLink] {
        switch text.lowercased() {
        case "device": return deviceLinks
        case "all": return allCases
        default:
            do {
                return [try named(text)]
            } catch {
                throw NetworkError("\(error.message); or device, or all")
            }
        }
    }
}

/// A network setting that cannot be used, and why, in words that name the setting.
public struct NetworkError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
