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

    init(environment: String) {
        self.environment = environment
    }
}

/// A provider's way in: token auth (no client certificate), or a client certificate.
enum ProviderCredential: Equatable {
    case token
    case certificate(ProviderCertificate)
    /// A certificate from the CA that is not a push certificate (no bundle id or environment).
    case unusableCertificate
}
