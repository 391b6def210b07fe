import NIOCore

/// A deadline on one connection, kept by a channel handler on the channel's event loop: when it passes,
/// `onTimeout` runs (to put it on the timeline) and the connection is closed. The handshake timeout of
/// the provider API and the request timeout of the media server are both one.
public struct ConnectionDeadline {
    private let timeout: TimeAmount
    private let onTimeout: @Sendable () -> Void
    private var timer: Scheduled<Void>?

    public init(timeout: TimeAmount, onTimeout: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.onTimeout = onTimeout
    }

    public var isRunning: Bool { timer != nil }

    /// Starts the clock again from now (replacing a running one).
    public mutating func restart(context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        let onTimeout = onTimeout
        timer = context.eventLoop.scheduleTask(in: timeout) {
            onTimeout()
            channel.close(mode: .all, promise: nil)
        }
    }

    public mutating func cancel() {
        timer?.cancel()
        timer = nil
    }
}
