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
    private let channels = LockedState<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [channels] _ in _ = channels.withLock { $0.removeValue(forKey: id) } }
    }

    /// Sends GOAWAY `Shutdown` on every connection and waits until they are closed.
    func shutdownAll() async {
        let open = channels.withLock { Array($0.values) }
        for channel in open {
            channel.eventLoop.execute { ConnectionGoAway.send(reason: "Shutdown", on: channel) }
        }
        for channel in open { try? await channel.closeFuture.get() }
    }
}
