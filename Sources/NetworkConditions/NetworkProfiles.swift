/// The profiles a run can name: Network Link Conditioner's presets, with the numbers published for
/// them (../shared/reference/faults.md §3.1), and the user's own from harness.yml.
public struct NetworkProfiles: Sendable {
    public private(set) var all: [NetworkProfile]

    public init(custom: [NetworkProfile] = []) { all = Self.builtIn + custom }

    private static func profile(
        _ name: String, down: (kbps: Int64?, ms: Int64, lossPercent: Int64),
        up: (kbps: Int64?, ms: Int64, lossPercent: Int64), dnsDelay: Duration = .zero, source: String
    ) -> NetworkProfile {
        func direction(_ side: (kbps: Int64?, ms: Int64, lossPercent: Int64)) -> NetworkProfile.Direction {
            .init(
                bitsPerSecond: side.kbps.map { $0 * 1000 }, delay: .milliseconds(side.ms),
                lossPerMillion: side.lossPercent * 10_000)
        }
        return NetworkProfile(name: name, down: direction(down), up: direction(up), dnsDelay: dnsDelay, source: source)
    }

    private static let conditioner = "Network Link Conditioner"
    private static let approximate = "Network Link Conditioner, approximate (one secondary source)"
    private static let older = "Network Link Conditioner's older presets (WebRTC's emulate.py)"

    /// Network Link Conditioner's presets, by their names there.
    public static let builtIn: [NetworkProfile] = [
        profile("3G", down: (780, 100, 0), up: (330, 100, 0), source: conditioner),
        profile("DSL", down: (2000, 5, 0), up: (256, 5, 0), source: conditioner),
        profile("EDGE", down: (240, 400, 0), up: (200, 440, 0), source: conditioner),
        profile("LTE", down: (50_000, 50, 0), up: (10_000, 65, 0), source: approximate),
        profile("WiFi", down: (40_000, 1, 0), up: (33_000, 1, 0), source: approximate),
        profile("WiFi 802.11ac", down: (250_000, 1, 0), up: (100_000, 1, 0), source: approximate),
        profile("Very Bad Network", down: (1000, 500, 10), up: (1000, 500, 10), source: approximate),
        profile("100% Loss", down: (nil, 0, 100), up: (nil, 0, 100), source: conditioner),
        profile(
            "High Latency DNS", down: (nil, 0, 0), up: (nil, 0, 0), dnsDelay: .seconds(3), source: approximate),
        profile("3G Lossy", down: (780, 100, 1), up: (330, 100, 1), source: older),
        profile("Edge Lossy", down: (240, 400, 1), up: (200, 400, 1), source: older),
    ]

    /// A name as profiles are looked up: case, spaces, hyphens, underscores and `%` ignored
    /// (`very-bad-network`, `100-loss`, `edge`).
    static func key(_ name: String) -> String {
        String(name.lowercased().filter { !" -_%".contains($0) })
    }

    /// The profile named `name`.
    public func named(_ name: String) throws(NetworkError) -> NetworkProfile {
        guard let profile = all.last(where: { Self.key($0.name) == Self.key(name) }) else {
            throw .unknownProfile(String(name.prefix(100)), known: all.map(\.name))
        }
        return profile
    }

    /// Adds the user's profile; a name already taken (as profiles are looked up) is an error.
    public mutating func add(_ profile: NetworkProfile) throws(NetworkError) {
        guard !profile.name.isEmpty, profile.name.count <= 100 else {
            throw .profileNameLength
        }
        // It names matrix cells, and so report folders: no path separators, no dot first, printable.
        guard !profile.name.hasPrefix("."), !profile.name.contains(where: { "/\\".contains($0) }),
            profile.name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw .profileNameUnsafe
        }
        guard Self.key(profile.name) != "none" else {
            throw .profileNameNone
        }
        if let taken = all.first(where: { Self.key($0.name) == Self.key(profile.name) }) {
            throw .profileNameTaken(profile.name, by: taken.name)
        }
        all.append(profile)
    }
}

/// How quantities of a profile are written: `780kbps`, `50Mbps`, `1.5 Mbps` or bits per second as a
/// number; `10%` or `0.1%`.
public enum NetworkQuantity {
    /// Bits per second, from 8 kbit/s (the fault proxy's 1 KB/s) to 100 Gbit/s.
    public static func bandwidth(_ text: String) throws(NetworkError) -> Int64 {
        let units: [(suffix: String, scale: Double)] = [
            ("gbps", 1e9), ("mbps", 1e6), ("kbps", 1e3), ("bps", 1),
        ]
        let lowered = text.lowercased().filter { $0 != " " }
        var number = lowered
        var scale = 1.0
        for unit in units where lowered.hasSuffix(unit.suffix) {
            number = String(lowered.dropLast(unit.suffix.count))
            scale = unit.scale
            break
        }
        guard let value = Double(number), value.isFinite, value > 0 else {
            throw .notABandwidth(String(text.prefix(100)))
        }
        let bits = value * scale
        guard bits >= 8000, bits <= 1e11 else {
            throw .bandwidthOutOfRange(String(text.prefix(100)))
        }
        return Int64(bits)
    }

    /// Millionths, from a percentage (`10%`, `0.1%`, `100%`).
    public static func loss(_ text: String) throws(NetworkError) -> Int64 {
        let trimmed = text.filter { $0 != " " }
        guard trimmed.hasSuffix("%"), let percent = Double(trimmed.dropLast()), percent.isFinite,
            percent >= 0, percent <= 100
        else {
            throw .notALoss(String(text.prefix(100)))
        }
        return Int64((percent * 10_000).rounded())
    }
}
