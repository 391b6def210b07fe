import Crypto
import Foundation

/// A provider authentication key as Apple issues it: an ES256 key with a 10-character key id, belonging
/// to a team, given to the provider as a `.p8` file (PKCS#8 PEM).
public struct ProviderSigningKey: Sendable {
    public let teamId: String
    public let keyId: String
    public let privateKey: P256.Signing.PrivateKey

    public init(teamId: String, keyId: String, privateKey: P256.Signing.PrivateKey = .init()) {
        self.teamId = teamId
        self.keyId = keyId
        self.privateKey = privateKey
    }

    /// The `.p8` file's contents.
    public var p8: String { privateKey.pemRepresentation }
}
