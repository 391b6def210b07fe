import Foundation
import HarnessTimeline
import NIOCore

/// Ends a provider connection the way APNs does: a GOAWAY frame whose debug data is `{"reason": …}`,
/// then close. Sits after the HTTP/2 handler and also turns an idle timeout into `IdleTimeout`.
final class ConnectionGoAway: ChannelInboundHandler {
    typealias InboundIn = ProviderStreamPart
    typealias OutboundOut = ProviderOutboundPart

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            Self.send(reason: "IdleTimeout", on: context.channel)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Writes the GOAWAY and closes the connection once it is out.
    static func send(reason: String, on channel: any Channel) {
        channel.writeAndFlush(ProviderOutboundPart.goAway(reason: reason)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}

/// The open provider connections, so that shutdown can say goodbye to each.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        /// Who waits for the number of open connections to satisfy a condition.
        var waiting: [UUID: (until: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]

        /// Takes out the waiters whose condition now holds.
        mutating func satisfied() -> [CheckedContinuation<Void, Never>] {
            let count = channels.count
            let done = waiting.filter { $0.value.until(count) }
            for id in done.keys { waiting[id] = nil }
            return done.values.map(\.continuation)
        }
    }

    private let state = LockedState(State())

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let opened = state.withLock { state in
            state.channels[id] = channel
            return state.satisfied()
        }
        for waiter in opened { waiter.resume() }
        channel.closeFuture.whenComplete { [state] _ in
            let closed = state.withLock { state in
                state.channels.removeValue(forKey: id)
                return state.satisfied()
            }
            for waiter in closed { waiter.resume() }
        }
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Returns once the number of open connections satisfies `condition` (at once if it already does),
    /// or when the caller is cancelled.
    func waitUntilCount(_ condition: @escaping @Sendable (Int) -> Bool) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let holds = state.withLock { state -> Bool in
                    if condition(state.channels.count) || Task.isCancelled { return true }
                    state.waiting[id] = (condition, continuation)
                    return false
                }
                if holds { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    /// Says goodbye on every connection (`farewell`; by default GOAWAY `Shutdown`) and waits until they
    /// are closed. A connection that cannot take it within `grace` (its TLS handshake never finished, its
    /// peer reads nothing) is closed without it.
    func shutdownAll(
        grace: TimeAmount = .seconds(2),
        farewell: @escaping @Sendable (any Channel) -> Void = { ConnectionGoAway.send(reason: "Shutdown", on: $0) }
    ) async {
        let open = state.withLock { Array($0.channels.values) }
        for channel in open {
            channel.eventLoop.execute {
                farewell(channel)
                let forced = channel.eventLoop.scheduleTask(in: grace) { channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in forced.cancel() }
            }
        }
        for channel in open { try? await channel.closeFuture.get() }
    }
}
