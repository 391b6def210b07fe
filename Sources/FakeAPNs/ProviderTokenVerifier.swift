import Crypto
import Foundation

/// Checks the signature and claims of provider authentication tokens (ES256 JWTs): the key id must be
/// a registered key of the issuing team and the signature must verify. Age and per-connection rules are
/// ``ProviderConnectionState``'s.
///
/// Tolerates what real clients send: raw or DER signatures, and `iat` as an integer, a float or a string.
public struct ProviderTokenVerifier: Sendable {
    struct RegisteredKey: Sendable {
        var teamId: String
        var key: P256.Signing.PublicKey
        /// nil: a key valid in both environments (Apple's legacy keys).
        var environment: String?
    }

    var keys: [String: RegisteredKey] = [:]

    public init() {}

    /// Registers a key; `environment` restricts it to `sandbox` or `production`, as Apple's newer
    /// team-scoped keys are.
    public mutating func register(_ key: ProviderSigningKey, environment: String? = nil) {
        keys[key.keyId] = RegisteredKey(teamId: key.teamId, key: key.privateKey.publicKey, environment: environment)
    }

    /// What a valid token says about its maker.
    public struct Claims: Equatable, Sendable {
        public var teamId: String
        public var keyId: String
        /// Seconds since 1970.
        public var issuedAt: Double
        /// The environment the key is restricted to, if it is.
        public var keyEnvironment: String?
    }

    public func verify(_ token: String) -> Result<Claims, APNsReason> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: parts[0]),
            let claimsData = Data(base64URLEncoded: parts[1]),
            let signatureData = Data(base64URLEncoded: parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return .failure(.invalidProviderToken) }
        guard (header["alg"] as? String) == "ES256", let keyId = header["kid"] as? String,
            let issuer = claims["iss"] as? String, let issuedAt = Self.seconds(claims["iat"]),
            let registered = keys[keyId], registered.teamId == issuer
        else { return .failure(.invalidProviderToken) }
        let signature =
            (try? P256.Signing.ECDSASignature(rawRepresentation: signatureData))
            ?? (try? P256.Signing.ECDSASignature(derRepresentation: signatureData))
        let signedPart = Data("\(parts[0]).\(parts[1])".utf8)
        guard let signature, registered.key.isValidSignature(signature, for: signedPart) else {
            return .failure(.invalidProviderToken)
        }
        return .success(
            Claims(teamId: issuer, keyId: keyId, issuedAt: issuedAt, keyEnvironment: registered.environment))
    }

    private static func seconds(_ value: Any?) -> Double? {
        switch value {
        case let number as NSNumber: number.doubleValue
        case let text as String: Double(text)
        default: nil
        }
    }
}
