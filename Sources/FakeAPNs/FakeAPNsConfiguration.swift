import Foundation
import HTTPServiceSupport
import Recording

/// How FakeAPNs listens, which credentials it makes and how it delivers. Every port may be 0 (any
/// free port).
public struct FakeAPNsConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// The provider API over TLS (ALPN `h2`, or HTTP/2 with prior knowledge); Apple's alternative port is
    /// 2197. Its environment is ``environment``.
    public var port = 2197
    /// The environment of ``port``: `sandbox` or `production`. Requests naming Apple's hosts in
    /// `:authority` are judged by the host instead.
    public var environment = "sandbox"
    /// A second TLS listener whose environment is `production`; nil for none.
    public var productionPort: Int?
    /// Plaintext HTTP/2 (h2c, prior knowledge) for local debugging, environment ``environment``; nil for none.
    public var plaintextPort: Int?
    /// Apple's legacy binary gateway (`gateway.push.apple.com:2195`, retired in 2021): TLS with a push
    /// certificate, environment ``environment``; nil for none.
    public var legacyPort: Int?
    /// The legacy feedback service (`feedback.push.apple.com:2196`) for the same certificates; nil for none.
    public var feedbackPort: Int?
    /// The inspection and control API (plain HTTP/1.1).
    public var controlPort = 0
    public var teamId = "HARNESSTM1"
    public var keyId = "HARNESSK01"
    /// Restricts the generated key to one environment, as Apple's team-scoped keys are; nil: both.
    public var keyEnvironment: String?
    /// A connection with no traffic for this long gets GOAWAY `IdleTimeout`; nil never times out.
    public var idleTimeout: Duration? = .seconds(3600)
    /// A TLS connection whose handshake has not finished this long after it opened is closed
    /// (`apns.connection.closed`, `why: handshake timeout`).
    public var handshakeTimeout: Duration = .seconds(10)
    /// The most provider connections each listener keeps open at once; one more is closed as it opens
    /// (`apns.connection.refused`). The benchmark opens 1000.
    public var maxConnections = 4096
    /// The control API's limits on connections, header fields and idle time (docs/limits.md).
    public var controlLimits = HTTPLimits()
    public var delivery = DeliveryPolicy()
    /// The notification log keeps the newest requests and forgets older ones, so that a long-running
    /// FakeAPNs does not grow without end: the newest this many, unless ``logBudget`` runs out first;
    /// nil (with no budget) keeps every request.
    public var logRetention: Int? = 100_000
    /// The most memory the notification log's entries may take, in bytes as the log estimates them
    /// (each request's fields and body, plus 64 bytes a field and 512 an entry: a typical push
    /// with a provider token, about 1.7 KB); nil: no memory limit. The default keeps about 19,000 of those.
    public var logBudget: Int? = 32 << 20
    /// Records every provider exchange into this cassette (HTTP/2, with its stream).
    public var recorder: CassetteRecorder?
    /// Run for each notification delivered to a device registered through the control API, with
    /// `{file}` (the notification as `xcrun simctl push` reads it, written in `deliveries/` of the
    /// credentials folder), `{topic}` and `{token}` filled in (``DeliveryCommand``); nil runs nothing.
    public var deliveryCommand: [String]?
    /// Where `ca.pem` and `AuthKey_<keyId>.p8` are written.
    public var credentialsDirectory: URL

    public init(credentialsDirectory: URL) {
        self.credentialsDirectory = credentialsDirectory
    }
}
