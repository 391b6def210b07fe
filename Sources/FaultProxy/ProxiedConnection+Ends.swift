import NIOCore
import NIOPosix
import Toxics

#if canImport(Glibc)
import Glibc
#endif

/// A proxied connection's flow control (reading pauses while too much is held) and its ends
/// (half-close, close, reset).
extension ProxiedConnection {
    // MARK: Flow control

    /// Whether the source of `stream` may be read from now.
    func mayRead(_ stream: ToxicStream) -> Bool {
        guard let direction = directions[stream] else { return false }
        if direction.heldBytes >= Self.heldLimit || direction.actions.count >= Self.actionLimit
            || !destination(stream).isWritable
        {
            directions[stream]?.readWaiting = true
            return false
        }
        return true
    }

    /// The destination of `stream` can take more: reading resumes if it waited.
    func destinationWritable(_ stream: ToxicStream) { resumeReadingIfRoom(stream) }

    func resumeReadingIfRoom(_ stream: ToxicStream) {
        guard let direction = directions[stream], direction.readWaiting, direction.heldBytes < Self.heldLimit,
            direction.actions.count < Self.actionLimit, destination(stream).isWritable
        else { return }
        directions[stream]?.readWaiting = false
        source(stream).read()
    }

    // MARK: Ends

    /// A direction ended: its destination is half-closed; when both have, the connection closes.
    func endDirection(_ stream: ToxicStream) {
        if directions.values.allSatisfy(\.ended) {
            close(.fin)
            return
        }
        // Half-closed once what was written has gone to the socket: closing the output of a channel
        // whose input has ended closes it whole, which would drop writes still queued.
        let destination = destination(stream)
        destination.writeAndFlush(ByteBuffer()).whenComplete { _ in destination.close(mode: .output, promise: nil) }
    }

    /// Closes both channels; a reset sends RST (`SO_LINGER` 0) on each.
    ///
    /// - Parameter afterWrites: a reset goes only once the writes already queued have reached the
    ///   socket (a peer's reset passed on behind its data); otherwise at once, as a toxic's reset is.
    func close(_ how: ToxicPipe.Closing, afterWrites: Bool = false) {
        guard !closed else { return }
        closed = true
        for stream in ToxicStream.allCases {
            directions[stream]?.timer?.cancel()
            directions[stream]?.deadlineTimer?.cancel()
        }
        for channel in [client, upstream] {
            guard how == .reset, let socket = channel as? any SocketOptionProvider else {
                // A FIN after the writes already queued: an empty write completes once they have gone.
                channel.writeAndFlush(ByteBuffer()).whenComplete { _ in channel.close(promise: nil) }
                continue
            }
            let written =
                afterWrites ? channel.writeAndFlush(ByteBuffer()) : channel.eventLoop.makeSucceededVoidFuture()
            written.whenComplete { _ in
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
