/// What the push channel needs of the push service's side (FakeAPNs's device gateway in a harness run):
/// tokens, and a device's reachability. The service hands each notification it delivers for a token to
/// the `deliver` it was given at registration, at once and in order, on whatever thread decided it.
public protocol PushServiceEndpoint: Sendable {
    /// A new token for a device of `topic`; notifications delivered for it go to `deliver`.
    func register(topic: String, deliver: @escaping @Sendable (IncomingPush) -> Void) -> String

    /// The device cannot be reached (`false`): the service stores what it accepts; reachable again, it
    /// delivers what it kept.
    func setOnline(_ token: String, _ online: Bool)

    /// The app was deleted: the service answers the token with `410 Unregistered` from now on.
    func unregister(_ token: String)
}
