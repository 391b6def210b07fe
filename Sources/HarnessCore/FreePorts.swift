import Foundation
import HarnessTimeline

#if canImport(Glibc)
import Glibc
#endif

/// Free ports for the links' fault proxies and for programs the harness starts and tells where to
/// listen (backends with `port: free`).
///
/// A port is taken from below the system's ephemeral range (``NetworkLinks/listeningPorts``), where no
/// outgoing connection takes it while the program starts; it is one that 127.0.0.1 can bind now, and
/// one no other run in this process holds: parallel runs never get the same port.
public final class FreePorts: Sendable {
    static let shared = FreePorts()
    private let held = LockedState<Set<Int>>([])

    /// A free port, held until ``release(_:)``.
    func take() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: NetworkLinks.listeningPorts)
            let fresh = held.withLock { $0.insert(port).inserted }
            guard fresh else { continue }
            if Self.bindable(port) { return port }
            held.withLock { _ = $0.remove(port) }
        }
        throw FreePortsExhausted()
    }

    func release(_ ports: some Sequence<Int>) {
        held.withLock { $0.subtract(ports) }
    }

    /// Whether 127.0.0.1 can listen on `port` now. A port in TIME_WAIT counts as taken, unless
    /// `reusingAddress` (as the services bind, with `SO_REUSEADDR`).
    public static func bindable(_ port: Int, reusingAddress: Bool = false) -> Bool {
        guard (1...65_535).contains(port) else { return false }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        if reusingAddress {
            var yes: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

struct FreePortsExhausted: Error, CustomStringConvertible {
    var description: String { "no free port found below the ephemeral range after 200 tries" }
}
