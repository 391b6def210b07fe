/// What the device sees of the push service: where it gets its token and its pushes (a
/// ``PushChannel`` in a harness run).
public protocol PushRegistry: Sendable {
    /// Registers the device for `topic` and returns the token; pushes accepted for it arrive at `deliver`.
    func registerDevice(
        topic: String, deliver: @escaping @Sendable (IncomingPush) async -> Void
    ) async throws -> String

    /// The device's network came or went: while unreachable, the push service stores what it accepts.
    func setReachable(_ reachable: Bool) async

    /// The app was deleted: the push service answers its token with `410 Unregistered` from now on.
    func unregisterDevice(token: String) async
}
