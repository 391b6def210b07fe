import NIOCore

/// One provider connection's state, shared by the handlers of its streams. Those handlers all run on
/// the connection's event loop, which is the only place this object is touched.
final class ProviderConnection: @unchecked Sendable {
    /// The environment of the listener the connection arrived at.
    let environment: String
    var state = ProviderConnectionState()
    /// Whether `MAX_CONCURRENT_STREAMS` has been raised after the first valid token.
    var streamsRaised = false

    init(environment: String) {
        self.environment = environment
    }
}
