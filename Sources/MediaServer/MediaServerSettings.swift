/// What can change while the media server runs.
public struct MediaServerSettings: Codable, Sendable, Equatable {
    /// Bytes per second per response body; nil for no limit. A change applies to responses that start
    /// after it.
    public var throttleBytesPerSecond: Int?

    public init(throttleBytesPerSecond: Int?) {
        self.throttleBytesPerSecond = throttleBytesPerSecond
    }
}
