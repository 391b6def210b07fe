import Foundation
import HTTPServiceSupport
import NIOCore

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
}
