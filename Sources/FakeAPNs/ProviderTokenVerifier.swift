import Crypto
import Foundation

/// Checks provider authentication tokens (ES256 JWTs) the way APNs does: the key id must be a
/// registered key of the issuing team, the signature must verify, and `iat` must be under an hour old.
///
/// Tolerates what real clients send: raw or DER signatures, and `iat` as an integer, a float or a string.
public struct ProviderTokenVerifier: Sendable {
    /// Public keys by key id, with the team each belongs to.
    var keys: [String: (teamId: String, key: P256.Signing.PublicKey)] = [:]
    /// APNs refuses tokens older than this.
    public var maximumAge: TimeInterval = 3600

    public init() {}

    public mutating func register(_ key: ProviderSigningKey) {
        keys[key.keyId] = (key.teamId, key.privateKey.publicKey)
    }

    public struct Identity: Equatable, Sendable {
        public var teamId: String
        public var keyId: String
    }

    /// - Returns: the team and key the token was made with, or the APNs reason for refusing it.
    public func verify(_ token: String, now: Date = Date()) -> Result<Identity, APNsReason> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: parts[0]),
            let claimsData = Data(base64URLEncoded: parts[1]),
            let signatureData = Data(base64URLEncoded: parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return .failure(.invalidProviderToken) }
        guard (header["alg"] as? String) == "ES256", let keyId = header["kid"] as? String,
            let issuer = claims["iss"] as? String, let issuedAt = Self.seconds(claims["iat"])
        else { return .failure(.invalidProviderToken) }
        guard let registered = keys[keyId] else { return .failure(.invalidProviderToken) }
        guard registered.teamId == issuer else { return .failure(.invalidProviderToken) }
        let signature =
            (try? P256.Signing.ECDSASignature(rawRepresentation: signatureData))
            ?? (try? P256.Signing.ECDSASignature(derRepresentation: signatureData))
        let signedPart = Data("\(parts[0]).\(parts[1])".utf8)
        guard let signature, registered.key.isValidSignature(signature, for: signedPart) else {
            return .failure(.invalidProviderToken)
        }
        guard now.timeIntervalSince1970 - issuedAt <= maximumAge else { return .failure(.expiredProviderToken) }
        return .success(Identity(teamId: issuer, keyId: keyId))
    }

    private static func seconds(_ value: Any?) -> Double? {
        switch value {
        case let number as NSNumber: number.doubleValue
        case let text as String: Double(text)
        default: nil
        }
    }
}
