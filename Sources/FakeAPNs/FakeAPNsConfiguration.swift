import Foundation

/// How FakeAPNs listens and which credentials it makes. Every port may be 0 (any free port).
public struct FakeAPNsConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// The provider API port; Apple's alternative port is 2197.
    public var port = 2197
    /// The inspection and control API (plain HTTP/1.1).
    public var controlPort = 0
    /// `sandbox` or `production`: decides `apns-unique-id` and which tokens this endpoint knows.
    public var environment = "sandbox"
    public var teamId = "HARNESSTM1"
    public var keyId = "HARNESSK01"
    /// Where `ca.pem` and `AuthKey_<keyId>.p8` are written.
    public var credentialsDirectory: URL

    public init(credentialsDirectory: URL) {
        self.credentialsDirectory = credentialsDirectory
    }
}
