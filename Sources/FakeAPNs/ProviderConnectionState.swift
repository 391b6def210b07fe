import Foundation

/// The provider-token rules APNs applies per connection, as a value: the first valid token binds the
/// connection to its key; a token is reused without re-verifying until it is an hour old (and is refused
/// when its `iat` lies more than an hour ahead); a new token
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

    /// Apple takes an `iat` "no more than one hour from the current time", either way: older is
    /// `ExpiredProviderToken` (make a new one), later cannot be a token made now, so it is refused as
    /// `InvalidProviderToken`, the reason Apple gives a token it cannot accept.
    static func timeWindowRefusal(issuedAt: Double, now: Date) -> APNsReason? {
        let age = now.timeIntervalSince1970 - issuedAt
        guard age.isFinite else { return .invalidProviderToken }
        if age > maximumTokenAge { return .expiredProviderToken }
        if age < -maximumTokenAge { return .invalidProviderToken }
        return nil
    }

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
            if let refusal = Self.timeWindowRefusal(issuedAt: claims.issuedAt, now: now) { return .failure(refusal) }
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
        if let refusal = Self.timeWindowRefusal(issuedAt: claims.issuedAt, now: now) { return .failure(refusal) }
        current = (String(token), claims)
        boundKeyId = claims.keyId
        return .success(claims)
    }
}
