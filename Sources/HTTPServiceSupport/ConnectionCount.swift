import HarnessTimeline
import NIOCore

/// How many connections one listener has open, held under its limit: a connection over it is closed as
/// it opens, so a flood cannot take every descriptor the process has.
public final class ConnectionCount: Sendable {
    private let limit: Int
    private let open = LockedState(0)

    public init(limit: Int) { self.limit = limit }

    /// Why a connection over the limit was not set up.
    public struct Full: Error {
        public init() {}
    }

    /// Counts `channel` in until it closes; false (and not counted) when the listener is full.
    public func enter(closing channel: any Channel) -> Bool {
        let admitted = open.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        if admitted { channel.closeFuture.whenComplete { [open] _ in open.withLock { $0 -= 1 } } }
        return admitted
    }
}
