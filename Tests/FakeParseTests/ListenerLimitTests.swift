import FakeParse
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// FakeParse's listener holds its clients to its limits, as every Hummingbird listener of the harness
/// does (the control APIs share the code): at `maxConnections` it stops accepting until a connection
/// closes, a request with too many header fields gets 431, and each limit reached is on the timeline.
@Suite struct ListenerLimitTests {
    @Test func atTheConnectionLimitTheNextClientWaitsForAConnectionToClose() async throws {
        var limits = HTTPLimits()
        limits.maxConnections = 3
        let timeline = Timeline()
        let services = try await FakeParseServerTests().start(timeline: timeline, limits: limits)
        let reached = Task {
            try await timeline.waitFor("the connection limit", timeout: .seconds(60)) {
                $0.kind == .serviceLimitReached && $0["service"] == "parse" && $0["limit"] == "3 connections"
            }
        }
        // Three idle clients fill the listener.
        let held = try (0..<3).map { _ in try TCPConnection(port: services.parse.port) }
        _ = try await reached.value
        // A fourth gets no answer while they are held (curl gives up after 2 s, however loaded the
        // machine: nothing answers it)...
        let waiting = try await ChildProcess.run(
            "curl", ["--silent", "--max-time", "2", "--output", "/dev/null", services.parse.url + "/health"])
        // ...and is accepted once one of them goes, and served.
        let fourth = Task { try await FakeParseServerTests().curl(services, "GET", "/health").status }
        held[0].close()
        let status = try await fourth.value
        for connection in held.dropFirst() { connection.close() }
        await services.close()
        #expect(waiting.status == 28, "curl was answered while the listener was full: \(waiting.transcript)")
        #expect(status == 200)
    }

    @Test func aRequestWithTooManyHeaderFieldsGets431AndIsOnTheTimeline() async throws {
        var limits = HTTPLimits()
        limits.maxHeaderFields = 8
        let timeline = Timeline()
        let services = try await FakeParseServerTests().start(timeline: timeline, limits: limits)
        // curl sends Host, User-Agent and Accept: 3 fields, then 9 with six more.
        let fine = try await ChildProcess.run(
            "curl", ["--silent", "--write-out", "%{http_code}", "-o", "/dev/null", services.parse.url + "/health"])
        let extra = (1...6).flatMap { ["-H", "X-Extra-\($0): 1"] }
        let refused = try await ChildProcess.run(
            "curl",
            ["--silent", "--write-out", "%{http_code}", "-o", "/dev/null"] + extra + [services.parse.url + "/health"])
        let events = timeline.events.filter { $0.kind == .serviceLimitReached }
        await services.close()
        #expect(fine.standardOutput == "200", "\(fine.transcript)")
        #expect(refused.standardOutput == "431", "\(refused.transcript)")
        #expect(events.count == 1)
        #expect(events.first?["service"] == "parse" && events.first?["limit"] == "8 header fields")
    }
}

/// A plain TCP connection to a loopback port, opened at once and closed by ``close()``.
final class TCPConnection: Sendable {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, connected == 0 else { throw CannotConnect(port: port, errno: errno) }
    }

    func close() { _ = Glibc.close(descriptor) }

    struct CannotConnect: Error {
        var port: Int
        var errno: Int32
    }
}
