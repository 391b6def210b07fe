import Foundation
import NIOCore
import HarnessTimeline
import NIOHTTP2

/// Ends a provider connection the way APNs does: a GOAWAY frame whose debug data is `{"reason": …}`,
/// then close. Sits after the HTTP/2 handler and also turns an idle timeout into `IdleTimeout`.
final class ConnectionGoAway: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            Self.send(reason: "IdleTimeout", on: context.channel)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Writes the GOAWAY and closes the connection once it is out.
    static func send(reason: String, on channel: any Channel) {
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(
                lastStreamID: .maxID, errorCode: .noError, opaqueData: ByteBuffer(string: #"{"reason":"\#(reason)"}"#)))
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// The open provider connections, so that shutdown can say goodbye to each.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var waitingForNone: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedState(State())

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { $0.channels[id] = channel }
        channel.closeFuture.whenComplete { [state] _ in
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.channels.removeValue(forKey: id)
                guard state.channels.isEmpty else { return [] }
                defer { state.waitingForNone.removeAll() }
                return state.waitingForNone
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Returns when no connection is open.
    func waitUntilNoneOpen() async {
        await withCheckedContinuation { continuation in
            let none = state.withLock { state -> Bool in
                if state.channels.isEmpty { return true }
                state.waitingForNone.append(continuation)
                return false
            }
            if none { continuation.resume() }
        }
    }

    /// Sends GOAWAY `Shutdown` on every connection and waits until they are closed. A connection that
    /// cannot take the frame within `grace` (its TLS handshake never finished, its peer reads nothing)
    /// is closed without it.
    func shutdownAll(grace: TimeAmount = .seconds(2)) async {
        let open = state.withLock { Array($0.channels.values) }
        for channel in open {
            channel.eventLoop.execute {
                ConnectionGoAway.send(reason: "Shutdown", on: channel)
                let forced = channel.eventLoop.scheduleTask(in: grace) { channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in forced.cancel() }
            }
        }
        for channel in open { try? await channel.closeFuture.get() }
    }
}
