import NIOCore

/// One provider connection's state, shared by the handlers of its streams. Those handlers all run on
/// the connection's event loop, which is the only place this object is touched.
final class ProviderConnection: @unchecked Sendable {
    /// The environment of the listener the connection arrived at.
    let environment: String
    var state = ProviderConnectionState()
    /// Whether `MAX_CONCURRENT_STREAMS` has been raised after the first valid token.
    var streamsRaised = false
    /// How the provider authenticates, decided at the first request from its TLS client certificate.
    var credential: ProviderCredential?
    /// Makes the `apns-id`s and `apns-unique-id`s of this connection's answers.
    var messageIds = MessageIDGenerator()
    /// The device token and payload of its last accepted request, for the next one to share.
    var recent = ProviderRequestValidator.Recent()

    /// The last request's authority and the environment it named: a provider names the same one on
    /// every request, and HPACK hands it over as the same string.
    private var lastAuthority: (authority: String?, environment: String)?

    init(environment: String) {
        self.environment = environment
    }

    /// The environment a request for `authority` goes to (``ProviderEndpoint/environment(authority:default:)``).
    func environment(authority: String?) -> String {
        if let lastAuthority, lastAuthority.authority == authority { return lastAuthority.environment }
        let named = ProviderEndpoint.environment(authority: authority, default: environment)
        lastAuthority = (authority, named)
        return named
    }
}

/// A provider's way in: token auth (no client certificate), or a client certificate.
enum ProviderCredential: Equatable {
    case token
    case certificate(ProviderCertificate)
    /// A certificate from the CA that is not a push certificate (no bundle id or environment).
    case unusableCertificate
}
