import Foundation
import HTTPServiceSupport
import Recording

/// Parse Server's keys, where FakeParse listens and stores, and the APNs provider it pushes through.
public struct FakeParseConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// Parse Server's customary port.
    public var port = 1337
    /// Connections, header fields per request and idle time (docs/limits.md).
    public var limits = HTTPLimits()
    public var applicationId = "nasa-tv"
    /// When set, clients must send it as `X-Parse-Client-Key` (or a REST key / the master key).
    public var clientKey: String?
    public var restAPIKey: String?
    public var masterKey = "master-key"
    /// The SQLite file; created if missing.
    public var databasePath: String
    /// Records every exchange into this cassette (`app→parse`, and `backend→parse` for `/push`).
    public var recorder: CassetteRecorder?
    public var apns: APNsProviderConfiguration
    /// Forget the device token of installations APNs answers `Unregistered` (410) or `BadDeviceToken`,
    /// as Parse Server does with `PARSE_SERVER_CLEANUP_INVALID_INSTALLATIONS` (off there by default too).
    public var cleanupInvalidInstallations = false

    public init(databasePath: String, apns: APNsProviderConfiguration) {
        self.databasePath = databasePath
        self.apns = apns
    }
}

/// What a Parse push adapter needs to reach APNs with token authentication.
public struct APNsProviderConfiguration: Sendable {
    /// e.g. `https://127.0.0.1:2197`.
    public var url: String
    /// A PEM file of extra roots to trust (FakeAPNs's CA); nil trusts only the system's.
    public var caFile: String?
    public var teamId: String
    public var keyId: String
    /// The `.p8` file.
    public var keyFile: String

    public init(url: String, caFile: String?, teamId: String, keyId: String, keyFile: String) {
        self.url = url
        self.caFile = caFile
        self.teamId = teamId
        self.keyId = keyId
        self.keyFile = keyFile
    }
}
