import DeviceProtocol
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The app's end of the device socket: newline-delimited JSON-RPC 2.0 over a Unix domain socket.
///
/// A dedicated thread reads lines and hands each incoming message to `onMessage`; writes happen under a
/// lock from any thread. When the device closes the socket the app has been terminated by its "OS", so
/// the process exits, as an iOS app would have been killed.
final class DeviceConnection: @unchecked Sendable {
    private let fd: Int32
    private let writeLock = NSLock()
    private let pendingLock = NSLock()
    private var pending = PendingRequests()
    private var nextId = 1
    private let onMessage: @Sendable (RPCMessage) -> Void

    init(socketPath: String, onMessage: @escaping @Sendable (RPCMessage) -> Void) throws {
        self.onMessage = onMessage
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DeviceClientError("socket() failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw DeviceClientError("device socket path is too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in pathBytes.enumerated() { buffer[index] = byte }
            buffer[pathBytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw DeviceClientError("cannot connect to the device socket \(socketPath): errno \(code)")
        }
        let thread = Thread { [self] in readLoop() }
        thread.name = "device-connection"
        thread.start()
    }

    /// Writes a request at once, so requests reach the device in the order the app made them, and
    /// hands the device's answer to `onResult` when it comes.
    func send<P: Encodable>(
        _ method: String, _ params: P, onResult: @escaping @Sendable (Result<JSONValue, any Error>) -> Void
    ) {
        let id = pendingLock.withLock {
            defer { nextId += 1 }
            pending[id: nextId] = onResult
            return nextId
        }
        do {
            try write(RPCMessage.request(id: id, method, params))
        } catch {
            pendingLock.withLock { pending[id: id] = nil }
            onResult(.failure(error))
        }
    }

    /// Sends a request and waits for the device's answer.
    func call<P: Encodable>(_ method: String, _ params: P) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { continuation in
            send(method, params) { continuation.resume(with: $0) }
        }
    }

    func notify<P: Encodable>(_ method: String, _ params: P) throws {
        try write(RPCMessage.notification(method, params))
    }

    func write(_ message: RPCMessage) throws {
        let data = try message.encodedLine()
        try writeLock.withLock {
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let sent = systemSend(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent < 0 {
                        if errno == EINTR { continue }
                        throw DeviceClientError("device socket write failed: errno \(errno)")
                    }
                    offset += sent
                }
            }
        }
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var line = [UInt8]()
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    dispatch(line)
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                }
            }
        }
        // The device went away: on iOS the app would have been terminated.
        exit(0)
    }

    private func dispatch(_ line: [UInt8]) {
        guard let message = try? RPCMessage.decode(line: line) else { return }
        if message.isResponse, let id = message.id {
            let onResult = pendingLock.withLock {
                defer { pending[id: id] = nil }
                return pending[id: id]
            }
            if let error = message.error {
                onResult?(.failure(error))
            } else {
                onResult?(.success(message.result ?? .null))
            }
        } else {
            onMessage(message)
        }
    }
}

#if canImport(Glibc)
private let systemSend = Glibc.send
#elseif canImport(Darwin)
private let systemSend = Darwin.send
#endif

/// Requests written and not yet answered, by id.
private struct PendingRequests {
    private var handlers: [Int: @Sendable (Result<JSONValue, any Error>) -> Void] = [:]

    subscript(id id: Int) -> (@Sendable (Result<JSONValue, any Error>) -> Void)? {
        get { handlers[id] }
        set { handlers[id] = newValue }
    }
}

/// Something went wrong between the app and its simulated device.
public struct DeviceClientError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
