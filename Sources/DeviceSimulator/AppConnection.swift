import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore

/// The device's end of one app's socket. Sending never waits: messages go into an ordered outbox that
/// one writer drains, so a stopped app (whose socket fills up) cannot stall a download, and messages
/// reach the app in the order the device sent them. Answers from the app are matched to the requests
/// waiting for them.
final class AppConnection: Sendable {
    private let outbox: AsyncStream<ByteBuffer>.Continuation
    /// The lines to write, in order; ``DeviceSimulator`` drains it into the socket.
    let outgoing: AsyncStream<ByteBuffer>
    private let pending = LockedState<(closed: Bool, waiting: [Int: CheckedContinuation<JSONValue, any Error>])>(
        (false, [:]))
    private let nextId = LockedState(1)

    init() {
        (outgoing, outbox) = AsyncStream.makeStream(of: ByteBuffer.self)
    }

    func send(_ message: RPCMessage) {
        guard let line = try? message.encodedLine() else { return }
        outbox.yield(ByteBuffer(bytes: line))
    }

    /// Sends a line already encoded (newline included).
    func send(line: Data) {
        outbox.yield(ByteBuffer(bytes: line))
    }

    func notify<P: Encodable>(_ method: String, _ params: P) {
        guard let message = try? RPCMessage.notification(method, params) else { return }
        send(message)
    }

    /// Sends a request and waits for the app's answer. Fails when the app disconnects, when the caller
    /// is cancelled, or after `timeout` if one is given.
    func request<P: Encodable & Sendable>(_ method: String, _ params: P, timeout: Duration? = nil) async throws
        -> JSONValue
    {
        let id = nextId.withLock { value in
            defer { value += 1 }
            return value
        }
        let message = try RPCMessage.request(id: id, method, params)
        guard let timeout else { return try await awaitAnswer(id: id, sending: message) }
        return try await withThrowingTaskGroup(of: JSONValue.self) { group in
            group.addTask { try await self.awaitAnswer(id: id, sending: message) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw DeviceError.noAnswer(method: method, within: timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    private func awaitAnswer(id: Int, sending message: RPCMessage) async throws -> JSONValue {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let registered = pending.withLock { state -> Bool in
                    guard !state.closed, !Task.isCancelled else { return false }
                    state.waiting[id] = continuation
                    return true
                }
                guard registered else {
                    continuation.resume(throwing: DeviceError.notConnected(disconnected: false))
                    return
                }
                send(message)
            }
        } onCancel: {
            pending.withLock { $0.waiting.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Hands an answer from the app to the request waiting for it.
    func complete(_ response: RPCMessage) {
        guard let id = response.id, let continuation = pending.withLock({ $0.waiting.removeValue(forKey: id) }) else {
            return
        }
        if let error = response.error {
            continuation.resume(throwing: error)
        } else {
            continuation.resume(returning: response.result ?? .null)
        }
    }

    /// The socket closed: fails every waiting request and ends the outbox.
    func close() {
        let waiting = pending.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: DeviceError.notConnected(disconnected: true)) }
        outbox.finish()
    }
}
