import Foundation

/// The provider-token rules APNs applies per connection, as a value: the first valid token binds the
/// connection to its key; a token is reused without re-verifying until it is an hour old; a new token
/// within 20 minutes of the last is refused; until the first valid token only one stream is allowed.
public struct ProviderConnectionState: Sendable {
    /// The key the first valid push used; later tokens must use it too.
    public private(set) var boundKeyId: String?
    private var current: (token: String, claims: ProviderTokenVerifier.Claims)?

    /// APNs refuses tokens whose `iat` is older than this.
    public static let maximumTokenAge: TimeInterval = 3600
    /// APNs refuses a new token sooner than this after the previous one on the same connection.
    public static let minimumTokenRefreshInterval: TimeInterval = 20 * 60

    public init() {}

    /// True once a request carried a valid token: the moment APNs raises `MAX_CONCURRENT_STREAMS`.
    public var isAuthenticated: Bool { boundKeyId != nil }

    /// Checks `token` for a request arriving at an endpoint of `environment`.
    public mutating func authenticate<Token: StringProtocol>(
        _ token: Token, environment: String, verifier: ProviderTokenVerifier, now: Date = Date()
    ) -> Result<ProviderTokenVerifier.Claims, APNsReason> {
        let claims: ProviderTokenVerifier.Claims
        if let current, current.token == token {
            // The same token as before, on every request but the first after a refresh: kept as it is.
            claims = current.claims
            guard now.timeIntervalSince1970 - claims.issuedAt <= Self.maximumTokenAge else {
                return .failure(.expiredProviderToken)
            }
            return .success(claims)
        } else {
            switch verifier.verify(String(token)) {
            case .failure(let reason): return .failure(reason)
            case .success(let verified): claims = verified
            }
            if let keyEnvironment = claims.keyEnvironment, keyEnvironment != environment {
                return .failure(.badEnvironmentKeyIdInToken)
            }
            if let boundKeyId, boundKeyId != claims.keyId { return .failure(.unrelatedKeyIdInToken) }
            if let current, claims.issuedAt - current.claims.issuedAt < Self.minimumTokenRefreshInterval {
                return .failure(.tooManyProviderTokenUpdates)
            }
        }
        guard now.timeIntervalSince1970 - claims.issuedAt <= Self.maximumTokenAge else {
            return .failure(.expiredProviderToken)
        }
        current = (String(token), claims)
        boundKeyId = claims.keyId
        return .success(claims)
    }
}
