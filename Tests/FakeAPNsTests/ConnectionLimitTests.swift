import FakeAPNs
import Foundation
import HarnessTimeline
import TestSupport
import Testing

/// Clients that hold connections without finishing a TLS handshake, or open more than a listener
/// takes, lose those connections; everyone else is served on.
@Suite struct ConnectionLimitTests {
    /// Opens `count` connections, each sending the first bytes of a ClientHello and no more, says so,
    /// then waits (up to two minutes) until the server has closed every one and says how many it saw
    /// and the shortest and longest time a connection lasted.
    static let halfHandshakes = """
        import select, socket, sys, time
        port, count = int(sys.argv[1]), int(sys.argv[2])
        sockets, opened = [], {}
        for _ in range(count):
            # Timed from before the connect: the server's timer cannot have started earlier.
            started = time.monotonic()
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(bytes.fromhex("160301020001") + bytes(20))
            sockets.append(s)
            opened[s] = started
        print("opened", len(sockets), flush=True)
        open_sockets, lasted = set(sockets), []
        while open_sockets:
            readable, _, _ = select.select(list(open_sockets), [], [], 120)
            if not readable:
                print("still open", len(open_sockets), flush=True)
                sys.exit(1)
            for s in readable:
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    open_sockets.discard(s)
                    lasted.append(time.monotonic() - opened[s])
                    s.close()
        print("closed", len(lasted), flush=True)
        print("lasted %.3f %.3f" % (min(lasted), max(lasted)), flush=True)
        """

    func bind(_ configure: (inout FakeAPNsConfiguration) -> Void) async throws -> (FakeAPNsServer, Timeline) {
        var configuration = FakeAPNsConfiguration(credentialsDirectory: try PackagePaths.temporaryDirectory())
        configuration.port = 0
        configuration.controlPort = 0
        configure(&configuration)
        let timeline = Timeline()
        return (try await FakeAPNsServer.start(configuration: configuration, timeline: timeline), timeline)
    }

    /// 300 connections that never finish their handshake hold 300 descriptors of the server until the
    /// handshake timeout, not longer: each is closed no sooner than the timeout, and once all are, the
    /// server holds none. A provider connecting meanwhile is served while they are held.
    @Test func halfFinishedHandshakesAreClosedAtTheTimeoutWhileOthersAreServed() async throws {
        // Long enough that the served push is over well before it, however loaded the machine.
        let (apns, timeline) = try await bind { $0.handshakeTimeout = .seconds(20) }
        let peer = try RunningChild(PackagePaths.python, ["-c", Self.halfHandshakes, "\(apns.port)", "300"])
        _ = try #require(await peer.waitForLine(containing: "opened 300"), "\(peer.output)")
        try await withDeadline(.seconds(30), "the 300 connections to be open on the server") {
            await apns.waitUntilOpenConnections(atLeast: 300)
        }
        // A provider pushing now is served while the 300 are held.
        let token = apns.gateway.register(topic: "com.example.app") { _ in }
        let status = try await apns.curlPush(to: token)
        let heldDuringThePush = !timeline.events.contains {
            $0.kind == .apnsConnectionClosed && $0["why"] == "handshake timeout"
        }
        let closed = await peer.waitForLine(containing: "closed", timeout: .seconds(150))
        let lasted = await peer.waitForLine(containing: "lasted", timeout: .seconds(10))
        try await withDeadline(.seconds(30), "every connection to close") { await apns.waitUntilNoConnectionIsOpen() }
        let openAtTheEnd = apns.openConnectionCount
        await apns.close()
        #expect(status == "200")
        #expect(heldDuringThePush, "a held connection was closed before the push was served")
        #expect(closed == "closed 300", "\(peer.output)")
        #expect(openAtTheEnd == 0)
        // Seconds from open to close, shortest and longest, as the peer measured them.
        let seconds = lasted?.split(separator: " ").dropFirst().compactMap { Double($0) } ?? []
        #expect(seconds.count == 2 && seconds[0] >= 19.9, "closed before the timeout: \(peer.output)")
        let timeouts = timeline.events.filter { $0.kind == .apnsConnectionClosed && $0["why"] == "handshake timeout" }
        #expect(timeouts.count == 300)
        #expect(
            timeouts.allSatisfy { $0["after"] == "20.0 seconds" }, "\(timeouts.first.map { "\($0.attributes)" } ?? "")")
        #expect(apns.log.entries(deviceToken: token).map(\.status) == [200])
    }

    @Test func aListenerClosesConnectionsBeyondItsLimitAsTheyOpen() async throws {
        let (apns, timeline) = try await bind {
            $0.maxConnections = 5
            $0.handshakeTimeout = .seconds(600)
        }
        // Five connections fill the listener; the peer waits until all are closed, which only the
        // server's shutdown does.
        let holders = try RunningChild(PackagePaths.python, ["-c", Self.halfHandshakes, "\(apns.port)", "5"])
        _ = try #require(await holders.waitForLine(containing: "opened 5"), "\(holders.output)")
        try await withDeadline(.seconds(30), "the five connections to be counted") {
            await apns.waitUntilOpenConnections(atLeast: 5)
        }
        // A sixth is accepted by the kernel and closed by FakeAPNs at once.
        let sixth = try await ChildProcess.run(PackagePaths.python, ["-c", Self.halfHandshakes, "\(apns.port)", "1"])
        #expect(sixth.standardOutput.contains("closed 1"), "\(sixth.transcript)")
        let refused = timeline.events.filter { $0.kind == .apnsConnectionRefused }
        #expect(refused.count == 1)
        #expect(refused.first?["why"] == "5 connections are open (maxConnections)")
        #expect(apns.openConnectionCount == 5)
        await apns.close()
        #expect(await holders.waitForLine(containing: "closed 5") != nil, "\(holders.output)")
    }

    /// Two requests open at once before the first valid token, once the provider has acknowledged the
    /// server's SETTINGS (`MAX_CONCURRENT_STREAMS` 1): a connection error, GOAWAY `PROTOCOL_ERROR`.
    static let secondStream = """
        import socket, ssl, sys
        import h2.config, h2.connection, h2.events, h2.settings
        context = ssl.create_default_context(cafile=sys.argv[2])
        context.set_alpn_protocols(["h2"])
        s = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="localhost")
        s.settimeout(30)
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        c.initiate_connection()
        s.sendall(c.data_to_send())
        # Until the server's SETTINGS came: h2 acknowledges them in what it sends next.
        while not any(isinstance(e, h2.events.RemoteSettingsChanged) for e in c.receive_data(s.recv(65535))):
            pass
        # h2 keeps to the server's limit itself; this client must not, so it forgets it.
        c.remote_settings._settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = [100]
        headers = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", "/3/device/00")]
        c.send_headers(1, headers)
        c.send_headers(3, headers)
        s.sendall(c.data_to_send())
        while True:
            data = s.recv(65535)
            if not data:
                print("closed")
                break
            ended = [e for e in c.receive_data(data) if isinstance(e, h2.events.ConnectionTerminated)]
            if ended:
                print("terminated", int(ended[0].error_code))
                break
        """

    @Test func aSecondStreamBeforeTheFirstTokenEndsTheConnectionOnceTheLimitIsAcknowledged() async throws {
        let (apns, _) = try await bind { _ in }
        let result = try await ChildProcess.run(
            PackagePaths.python, ["-c", Self.secondStream, "\(apns.port)", apns.caFile.path])
        await apns.close()
        #expect(result.standardOutput.contains("terminated 1"), "\(result.transcript)")
    }

    /// A header block over the 16 KB header list limit: the connection ends (GOAWAY), the timeline says
    /// why, and other providers are served.
    static let headerFlood = """
        import socket, ssl, sys
        import h2.config, h2.connection, h2.events
        context = ssl.create_default_context(cafile=sys.argv[2])
        context.set_alpn_protocols(["h2"])
        s = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="localhost")
        s.settimeout(30)
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, validate_outbound_headers=False))
        c.initiate_connection()
        s.sendall(c.data_to_send())
        headers = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", "/3/device/00")]
        c.send_headers(1, headers + [(f"x-{i}", "v") for i in range(20000)], end_stream=True)
        try:
            s.sendall(c.data_to_send())
            while True:
                data = s.recv(65535)
                if not data or any(isinstance(e, h2.events.ConnectionTerminated) for e in c.receive_data(data)):
                    break
        except OSError:
            pass
        print("refused")
        """

    @Test func aHeaderListOverTheLimitEndsThatConnectionAndSaysWhy() async throws {
        let (apns, timeline) = try await bind { _ in }
        let flood = try await ChildProcess.run(
            PackagePaths.python, ["-c", Self.headerFlood, "\(apns.port)", apns.caFile.path])
        #expect(flood.standardOutput.contains("refused"), "\(flood.transcript)")
        let closed = try await timeline.waitFor("apns.connection.closed", timeout: .seconds(30)) {
            $0.kind == .apnsConnectionClosed
        }
        let token = apns.gateway.register(topic: "com.example.app") { _ in }
        let status = try await apns.curlPush(to: token)
        await apns.close()
        #expect(status == "200")
        #expect(closed["why"]?.isEmpty == false && closed["why"] != "handshake timeout", "\(closed)")
    }
}
