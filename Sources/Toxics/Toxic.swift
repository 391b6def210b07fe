import Foundation

/// Which way a toxic acts on a connection's bytes, as Toxiproxy names them: `upstream` is what the
/// client sends to the server, `downstream` what the server sends back.
public enum ToxicStream: String, Sendable, Codable, CaseIterable {
    case upstream, downstream

    /// The other way.
    public var reversed: ToxicStream { self == .upstream ? .downstream : .upstream }
}

/// The kinds of toxic, with Toxiproxy's names and attributes (every attribute a whole number).
public enum ToxicKind: String, Sendable, CaseIterable {
    /// Each chunk held `latency` ms, ± `jitter` ms.
    case latency
    /// At most `rate` KB/s (1 KB = 1000 bytes), in pieces of at most a tenth of a second's worth.
    case bandwidth
    /// The end of the stream held `delay` ms.
    case slowClose = "slow_close"
    /// Every byte dropped; the connection closed after `timeout` ms without data (0: never).
    case timeout
    /// At the first data (or the end), `timeout` ms later, the connection reset (TCP RST).
    case resetPeer = "reset_peer"
    /// Each chunk cut into pieces of about `average_size` ± `size_variation` bytes, `delay` µs apart.
    case slicer
    /// `bytes` bytes pass; then the connection is closed.
    case limitData = "limit_data"
    /// Nothing.
    case noop
    /// Beyond Toxiproxy: each segment of 1448 bytes (a TCP segment on Ethernet) lost with a chance of
    /// `per_million` in a million and sent again `retransmit` ms later (0: 200 ms, Linux's shortest
    /// retransmission timeout), the wait doubling each time it is lost again, everything behind it held
    /// as TCP holds it. A million in a million: nothing passes.
    case loss
    /// Beyond Toxiproxy: the stream's first bytes held `delay` ms, as a slow name lookup holds a new
    /// connection's first request (Network Link Conditioner's High Latency DNS).
    case dnsDelay = "dns_delay"
    /// Beyond Toxiproxy, on HTTP/1.x: a connection's first request answered `status` (with
    /// `Retry-After: retry_after` s when not 0) by the proxy, never reaching the server (``HTTPFault``).
    case httpStatus = "http_status"
    /// Beyond Toxiproxy, on HTTP/1.x: the first response cut after `body_bytes` bytes of its body, with
    /// a FIN, or an RST when `reset` is 1 (``HTTPFault``).
    case httpCut = "http_cut"

    /// The attributes the kind has, in the order Toxiproxy lists them.
    public var attributeNames: [String] {
        switch self {
        case .latency: ["latency", "jitter"]
        case .bandwidth: ["rate"]
        case .slowClose: ["delay"]
        case .timeout, .resetPeer: ["timeout"]
        case .slicer: ["average_size", "size_variation", "delay"]
        case .limitData: ["bytes"]
        case .noop: []
        case .loss: ["per_million", "retransmit"]
        case .dnsDelay: ["delay"]
        case .httpStatus: ["status", "retry_after"]
        case .httpCut: ["body_bytes", "reset"]
        }
    }

    /// The largest value each attribute takes: a day in milliseconds, 10 GB/s, 1 GiB pieces or data,
    /// a second between slices. Toxiproxy checks nothing (a negative rate panics it); here a value
    /// out of range is refused, naming the attribute.
    func range(of attribute: String) -> ClosedRange<Int64> {
        switch (self, attribute) {
        case (.bandwidth, _): 1...10_000_000
        case (.slicer, "delay"): 0...1_000_000
        case (.slicer, _), (.limitData, _): 0...(1 << 30)
        case (.loss, "per_million"): 0...1_000_000
        case (.httpStatus, "status"): 100...599
        case (.httpStatus, "retry_after"): 0...86_400
        case (.httpCut, "body_bytes"): 0...(1 << 30)
        case (.httpCut, "reset"): 0...1
        default: 0...86_400_000
        }
    }
}

/// A toxic as Toxiproxy's API shows it: `{"name","type","stream","toxicity","attributes"}`.
public struct Toxic: Sendable, Equatable {
    public var name: String
    public var kind: ToxicKind
    public var stream: ToxicStream
    /// The share of connections it acts on, from 0 to 1, drawn per connection and direction.
    public var toxicity: Double
    /// The kind's attributes, every one present (0 when not given).
    public var attributes: [String: Int64]

    public init(
        name: String? = nil, kind: ToxicKind, stream: ToxicStream = .downstream, toxicity: Double = 1,
        attributes: [String: Int64] = [:]
    ) {
        self.name = name ?? "\(kind.rawValue)_\(stream.rawValue)"
        self.kind = kind
        self.stream = stream
        self.toxicity = toxicity
        self.attributes = Dictionary(uniqueKeysWithValues: kind.attributeNames.map { ($0, attributes[$0] ?? 0) })
    }

    public subscript(_ attribute: String) -> Int64 { attributes[attribute] ?? 0 }
}
