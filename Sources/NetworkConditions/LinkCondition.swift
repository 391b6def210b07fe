import Toxics

/// What one link is made to do at one moment of a run: a network profile, down or up, and faults of
/// its own. On a TCP link they become the fault proxy's toxics; on the push channel, the push faults.
public struct LinkCondition: Sendable, Equatable {
    public var profile: NetworkProfile?
    /// Down: a TCP link refuses new connections and drops those open (Toxiproxy's `enabled: false`);
    /// the push channel is the device's connection to APNs lost (APNs stores what it accepts).
    public var down = false
    /// The fault proxy's toxics of its own, after the profile's (TCP links).
    public var toxics: [Toxic] = []
    /// Faults of the push channel.
    public var push = PushFaults()

    public init(profile: NetworkProfile? = nil, down: Bool = false, toxics: [Toxic] = [], push: PushFaults = .init()) {
        self.profile = profile
        self.down = down
        self.toxics = toxics
        self.push = push
    }

    public static let clear = LinkCondition()

    public var isClear: Bool { self == .clear }

    /// The fault proxy's toxics for it: the profile's, then its own.
    public var proxyToxics: [Toxic] { (profile?.toxics ?? []) + toxics }

    /// In a few words, for the timeline and the report: `EDGE`, `down`, `3G + latency_downstream`, `clear`.
    public var summary: String {
        var parts: [String] = []
        if down { parts.append("down") }
        if let profile { parts.append(profile.name) }
        parts += toxics.map(\.name)
        parts += push.summary
        return parts.isEmpty ? "clear" : parts.joined(separator: " + ")
    }
}

/// How long the push channel holds a push before the device gets it.
public enum PushDelay: Sendable, Equatable {
    case fixed(Duration)
    /// Drawn evenly between the two.
    case uniform(Duration, Duration)
    /// Drawn from an exponential distribution with this mean (most pushes quick, a few very late),
    /// at most a day.
    case exponential(mean: Duration)

    var summary: String {
        switch self {
        case .fixed(let delay): "delay \(delay.formatted())"
        case .uniform(let low, let high): "delay \(low.formatted())–\(high.formatted())"
        case .exponential(let mean): "delay ~\(mean.formatted()) mean"
        }
    }
}

/// The push channel's faults: APNs is best effort for background pushes, and a phone's connection to
/// it is a TCP connection over a radio.
public struct PushFaults: Sendable, Equatable {
    public var delay: PushDelay?
    /// The chance a push is lost, in millionths.
    public var dropPerMillion: Int64 = 0
    /// The chance a push arrives twice, in millionths.
    public var duplicatePerMillion: Int64 = 0
    /// Each push held a further random time up to this: pushes closer than it may arrive swapped.
    public var reorderWindow: Duration = .zero

    public init(
        delay: PushDelay? = nil, dropPerMillion: Int64 = 0, duplicatePerMillion: Int64 = 0,
        reorderWindow: Duration = .zero
    ) {
        self.delay = delay
        self.dropPerMillion = dropPerMillion
        self.duplicatePerMillion = duplicatePerMillion
        self.reorderWindow = reorderWindow
    }

    var summary: [String] {
        var parts: [String] = []
        if let delay { parts.append(delay.summary) }
        if dropPerMillion > 0 { parts.append("drop \(Percent(dropPerMillion))") }
        if duplicatePerMillion > 0 { parts.append("duplicate \(Percent(duplicatePerMillion))") }
        if reorderWindow > .zero { parts.append("reorder \(reorderWindow.formatted())") }
        return parts
    }
}

/// Millionths as a percentage, as harness.yml writes them: `10%`, `0.5%`.
struct Percent: CustomStringConvertible {
    var perMillion: Int64
    init(_ perMillion: Int64) { self.perMillion = perMillion }
    var description: String {
        let whole = perMillion / 10_000
        let rest = perMillion % 10_000
        guard rest != 0 else { return "\(whole)%" }
        var fraction = String(rest + 10_000).dropFirst()
        while fraction.hasSuffix("0") { fraction = fraction.dropLast() }
        return "\(whole).\(fraction)%"
    }
}

extension Duration {
    /// `90s`, `1.5s`, `250ms`: as harness.yml writes times.
    func formatted() -> String {
        let milliseconds = wholeMilliseconds
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        return "\(Double(milliseconds) / 1000)s"
    }
}
