import Toxics

/// A network's shape each way, as Network Link Conditioner sets it: bandwidth, delay and packet loss
/// down (towards the side that connects: the phone on the device's links) and up, and a delay for
/// each new connection's name lookup.
public struct NetworkProfile: Sendable, Equatable {
    /// One direction.
    public struct Direction: Sendable, Equatable {
        /// Bits per second; nil: not limited.
        public var bitsPerSecond: Int64?
        public var delay: Duration
        /// The chance each TCP segment (and each push) is lost, in millionths.
        public var lossPerMillion: Int64

        public init(bitsPerSecond: Int64? = nil, delay: Duration = .zero, lossPerMillion: Int64 = 0) {
            self.bitsPerSecond = bitsPerSecond
            self.delay = delay
            self.lossPerMillion = lossPerMillion
        }
    }

    public var name: String
    public var down: Direction
    public var up: Direction
    public var dnsDelay: Duration
    /// Where the numbers come from (for the built-in ones), or "harness.yml".
    public var source: String

    public init(
        name: String, down: Direction, up: Direction, dnsDelay: Duration = .zero, source: String = "harness.yml"
    ) {
        self.name = name
        self.down = down
        self.up = up
        self.dnsDelay = dnsDelay
        self.source = source
    }

    /// Whether nothing gets through: every segment lost one way or the other.
    public var losesEverything: Bool { down.lossPerMillion >= 1_000_000 || up.lossPerMillion >= 1_000_000 }

    /// The fault proxy's toxics that make a TCP link this network: each way its bandwidth (in pieces of
    /// a tenth of a second), then its loss (retransmitted segments), then its delay; the name lookup's
    /// delay on the first bytes up. Each is named `profile_<type>_<stream>`.
    public var toxics: [Toxic] {
        var toxics: [Toxic] = []
        if dnsDelay > .zero {
            toxics.append(
                Toxic(
                    name: "profile_dns_delay_upstream", kind: .dnsDelay, stream: .upstream,
                    attributes: ["delay": dnsDelay.wholeMilliseconds]))
        }
        for (stream, direction) in [(ToxicStream.downstream, down), (.upstream, up)] {
            func add(_ kind: ToxicKind, _ attributes: [String: Int64]) {
                toxics.append(
                    Toxic(
                        name: "profile_\(kind.rawValue)_\(stream.rawValue)", kind: kind, stream: stream,
                        attributes: attributes))
            }
            // 1 KB/s in the proxy's units is 8000 bit/s; the slowest it goes is 1 KB/s.
            if let bits = direction.bitsPerSecond { add(.bandwidth, ["rate": max(bits / 8000, 1)]) }
            if direction.lossPerMillion > 0 { add(.loss, ["per_million": min(direction.lossPerMillion, 1_000_000)]) }
            if direction.delay > .zero { add(.latency, ["latency": direction.delay.wholeMilliseconds]) }
        }
        return toxics
    }

    /// A push of `bytes` bytes on the push channel under this profile: the downlink's delay and the time
    /// its bytes take at the downlink's bandwidth.
    public func pushDelay(bytes: Int) -> Duration {
        var delay = down.delay
        if let bits = down.bitsPerSecond, bits > 0 {
            delay += .microseconds(Int64(min(bytes, 1 << 20)) * 8 * 1_000_000 / bits)
        }
        return delay
    }
}

extension Duration {
    /// Whole milliseconds, at most a day (the proxy's bound for a time).
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return min(min(seconds, 86_400) * 1000 + attoseconds / 1_000_000_000_000_000, 86_400_000)
    }
}
