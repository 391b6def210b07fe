import Testing

@testable import HarnessCore

#if canImport(Glibc)
import Glibc
#endif

/// Which socket listens on a port, read from Linux's table of TCP sockets.
struct PortHolderTests {
    static let table = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:AEEF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3489022 1 0 100 0 0 10 0
           1: 0100007F:AEEF 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 3489030 1 0 100 0 0 10 0
           2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0 100 0 0 10 0
        """

    @Test func onlyTheListeningSocketOnThePortCounts() {
        // 0xAEEF is 44783; the second line is a connection on it, not a listener.
        #expect(PortHolder.listeningInodes(port: 44783, in: Self.table) == ["3489022"])
        #expect(PortHolder.listeningInodes(port: 8080, in: Self.table) == ["777"])
        #expect(PortHolder.listeningInodes(port: 1337, in: Self.table).isEmpty)
    }

    @Test func thisProcesssOwnListenerIsFoundByItsPid() throws {
        let port = try FreePorts.shared.take()
        defer { FreePorts.shared.release([port]) }
        let listener = try #require(TestListener(port: port))
        defer { listener.close() }
        let holder = try #require(PortHolder.of(port: port))
        #expect(holder.pid == getpid())
    }
}

/// A socket listening on 127.0.0.1:`port`, for as long as it is open.
struct TestListener {
    let descriptor: Int32

    init?(port: Int) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else {
            Glibc.close(descriptor)
            return nil
        }
    }

    func close() { Glibc.close(descriptor) }
}
