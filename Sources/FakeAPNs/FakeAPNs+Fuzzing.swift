import Foundation
import HTTPServiceSupport
import HarnessTimeline
import NIOCore
import NIOEmbedded
import NIOHTTP2

/// FakeAPNs's control API bodies, reachable by the fuzzer (`Sources/HarnessFuzzer`): an injected
/// failure, a rate limit and a certificate request as a client sends them; what passes the checks is
/// used as the server would use it, its arithmetic included.
@_spi(Fuzzing) public enum FakeAPNsFuzzing {
    public static func controlBody(_ bytes: [UInt8]) {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let faults = FaultInjector()
        let token = String(repeating: "a", count: 64)
        if let request = try? decoder.decode(ControlAPI.FailureRequest.self, from: data),
            FaultInjector.problem(with: request.failure) == nil
        {
            faults.inject(request.failure, for: token)
            _ = TimeAmount(faults.verdict(for: token).delay)
        }
        if let request = try? decoder.decode(ControlAPI.RateLimitRequest.self, from: data),
            let rate = request.requestsPerSecond
        {
            let limit = FaultInjector.RateLimit(requestsPerSecond: rate, burst: request.burst)
            if FaultInjector.problem(with: limit) == nil {
                faults.limit(token, to: limit)
                let start = ContinuousClock.now
                _ = faults.verdict(for: token, now: start)
                _ = faults.verdict(for: token, now: start.advanced(by: .seconds(86_400)))
            }
        }
        if let request = try? decoder.decode(ControlAPI.CertificateRequest.self, from: data) {
            _ = PushCertificateIssuer.problem(bundleId: request.bundleId)
        }
    }

    /// A connection's bytes to the legacy binary gateway: read command by command as the gateway reads
    /// them, each notification validated as the gateway validates it (a device directory that knows
    /// no token), its refusal turned into the error response.
    public static func legacyStream(_ bytes: [UInt8]) {
        let validator = ProviderRequestValidator { _ in nil }
        let certificate = ProviderCertificate(bundleId: "com.example.app", environments: ["sandbox"])
        var used = 0
        while used < bytes.count {
            switch LegacyFrameReader.next(bytes[used...]) {
            case .needMore: return
            case .refused(let response):
                _ = response.bytes
                return
            case .notification(let notification, let length):
                used += length
                let request = ProviderEndpoint.legacyRequest(notification)
                if case .failure(let reason) = validator.validate(
                    request, environment: "sandbox", certificate: certificate, authenticate: { _ in nil })
                {
                    _ = LegacyStatus.answering(reason).map {
                        LegacyErrorResponse(status: $0, identifier: notification.identifier).bytes
                    }
                }
            }
        }
    }

    /// A provider connection's bytes after the client preface, through the HTTP/2 layer (libnghttp2
    /// and its handler) and ``ProviderConnectionHandler`` to the provider API, as a TLS connection's
    /// plaintext: frames of every kind, HPACK blocks, header fields of any bytes, bodies, trailers.
    /// Returns the statuses the provider API decided, in order.
    @discardableResult
    public static func providerConnection(_ bytes: [UInt8]) -> [Int] {
        let timeline = Timeline(retention: 100)
        let log = NotificationLog(retention: 100)
        let gateway = DeviceGateway(timeline: timeline, log: log, policy: DeliveryPolicy())
        _ = gateway.register(topic: "com.example.app") { _ in }
        let endpoint = ProviderEndpoint(
            verifier: ProviderTokenVerifier(), gateway: gateway, log: log, faults: FaultInjector(), timeline: timeline)
        let channel = EmbeddedChannel()
        let settings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: FakeAPNsServer.unauthenticatedConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: FakeAPNsServer.maxHeaderListSize),
        ]
        do {
            try channel.pipeline.syncOperations.addHandler(
                NGHTTP2ServerHandler(initialSettings: settings, maxHeaderListSize: FakeAPNsServer.maxHeaderListSize))
            try channel.pipeline.syncOperations.addHandler(
                ProviderConnectionHandler(endpoint: endpoint, connection: ProviderConnection(environment: "sandbox")))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            var input = channel.allocator.buffer(capacity: 24 + bytes.count)
            input.writeString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            input.writeBytes(bytes)
            try channel.writeInbound(input)
        } catch {
            // A connection the server ended (a protocol error, a closed channel) is an answer too.
        }
        while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
        // A connection the server closed itself (after a GOAWAY) is already closed, and `finish` then
        // throws before it runs the loop: the pipeline's handlers are removed (the nghttp2 session
        // freed) by the loop's next run.
        _ = try? channel.finish()
        channel.embeddedEventLoop.run()
        return log.entries().map(\.status)
    }
}
