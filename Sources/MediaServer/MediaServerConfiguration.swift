import Foundation

/// The MAMP box: which folder it serves, where, and how fast.
public struct MediaServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// The tutorial's MAMP virtual host listens on 44447.
    public var port = 44447
    public var root: URL
    /// Bytes per second per response body; nil for no limit.
    public var throttleBytesPerSecond: Int?

    public init(root: URL) { self.root = root }
}
