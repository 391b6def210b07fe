import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore

/// The device's end of one app's socket: sends notifications and requests to the app and matches the
/// app's answers to the requests waiting for them.
final class AppConnection: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let pending = LockedState<[Int: CheckedContinuation<JSONValue, any Error>]>([:])
    private let nextId = LockedState(1)

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) {
        self.outbound = outbound
    }

    func send(_ message: RPCMessage) async {
        guard let line = try? message.encodedLine() else { return }
        try? await outbound.write(ByteBuffer(bytes: line))
    }

    func notify<P: Encodable>(_ method: String, _ params: P) async {
        guard let message = try? RPCMessage.notification(method, params) else { return }
        await send(message)
    }

    /// Sends a request and waits for the app's answer, failing after `timeout` or when the app goes away.
    func request<P: Encodable>(_ method: String, _ params: P, timeout: Duration) async throws -> JSONValue {
        let id = nextId.withLock { value in
            defer { value += 1 }
            return value
        }
        let message = try RPCMessage.request(id: id, method, params)
        let timeoutTask = Task { [pending] in
            try await Task.sleep(for: timeout)
            pending.withLock { $0.removeValue(forKey: id) }?.resume(
                throwing: DeviceError("the app did not answer \(method) within \(timeout)"))
        }
        defer { timeoutTask.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0[id] = continuation }
            Task { await send(message) }
        }
    }

    /// Hands an answer from the app to the request waiting for it.
    func complete(_ response: RPCMessage) {
        guard let id = response.id, let continuation = pending.withLock({ $0.removeValue(forKey: id) }) else { return }
        if let error = response.error {
            continuation.resume(throwing: error)
        } else {
            continuation.resume(returning: response.result ?? .null)
        }
    }

    /// Fails every waiting request: the app's socket closed.
    func close() {
        let waiting = pending.withLock { state in
            defer { state.removeAll() }
            return Array(state.values)
        }
        for continuation in waiting { continuation.resume(throwing: DeviceError("the app disconnected")) }
    }
}
