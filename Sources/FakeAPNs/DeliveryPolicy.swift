/// How FakeAPNs delivers what it accepted, where Apple leaves the details open.
public struct DeliveryPolicy: Sendable {
    /// Online devices get priority-5 and priority-1 notifications after this window, and a newer one
    /// for the same topic within it replaces the older ("may coalesce"). Zero delivers at once.
    public var coalescingWindow: Duration = .zero
    /// How long a notification without `apns-expiration` is stored for an offline device. Apple: 30 days.
    public var defaultStorage: Duration = .seconds(30 * 24 * 3600)

    public init() {}
}
