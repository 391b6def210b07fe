import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Hummingbird
import Logging

/// FakeAPNs's inspection and control API (plain HTTP on loopback), documented in
/// docs/apns-control-api.md: devices, what was decided, injected failures and rate limits, reset.
public final class ControlAPI: Sendable {
    /// Binds in ``FakeAPNsServer/run()``, which runs it.
    let listener: HTTPListener

    /// The port bound, or 0 before it is.
    public var port: Int { listener.boundPort ?? 0 }

    private init(listener: HTTPListener) { self.listener = listener }

    struct RegisterRequest: Decodable {
        var topic: String
        var environment: String?
    }

    struct DeviceResponse: ResponseEncodable {
        var deviceToken: String
        var topic: String
        var environment: String
        var online: Bool
        /// Milliseconds since 1970, as in a `410` body.
        var unregisteredAt: Int64?
    }

    struct FailureRequest: Decodable {
        var deviceToken: String
        var failure: FaultInjector.Failure

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            deviceToken = try container.decode(String.self, forKey: .deviceToken)
            failure = try FaultInjector.Failure(from: decoder)
        }

        enum CodingKeys: String, CodingKey { case deviceToken }
    }

    struct RateLimitRequest: Decodable {
        var deviceToken: String
        /// null removes the limit.
        var requestsPerSecond: Double?
        var burst: Int?
    }

    struct CertificateRequest: Decodable {
        var bundleId: String
        /// `sandbox`, `production` or `universal`.
        var environment: String?
        /// Protects the `.p12`; ``PushCertificateIssuer/defaultPassphrase`` when absent.
        var p12Passphrase: String?
    }

    struct IssuedResponse: ResponseEncodable {
        var certificateFile: String
        var keyFile: String
        var combinedFile: String
        var cerFile: String
        var p12File: String
    }

    struct NotificationList: ResponseEncodable {
        var results: [NotificationLog.Entry]
        /// How many older requests the log no longer keeps (see `logRetention` and `logBudget`).
        var forgotten: Int
    }

    static func make(
        host: String, port: Int, gateway: DeviceGateway, log: NotificationLog, faults: FaultInjector,
        certificates: PushCertificateIssuer, limits: HTTPLimits, timeline: Timeline, logger: Logger,
        deliveries: DeliveryCommand? = nil
    ) -> ControlAPI {
        let router = Router()
        router.get("/health") { _, _ in "ok" }
        router.post("/devices") { request, context -> EditedResponse<DeviceResponse> in
            let body = try await decode(
                RegisterRequest.self, request, context,
                example: #"{"topic": "com.example.app", "environment": "sandbox"}"#)
            let environment = body.environment ?? "sandbox"
            guard ["sandbox", "production"].contains(environment) else {
                throw HTTPError(
                    .badRequest, message: "environment must be 'sandbox' or 'production', not '\(environment)'")
            }
            // A device registered from outside has no simulated app: deliveries are only recorded, and
            // handed to `deliveryCommand` when there is one (a real app in Apple's Simulator).
            let token = gateway.register(topic: body.topic, environment: environment) { deliveries?.deliver($0) }
            return EditedResponse(status: .created, response: try describe(token, gateway))
        }
        router.get("/devices/:token") { _, context in try describe(try context.parameters.require("token"), gateway) }
        router.delete("/devices/:token") { _, context in
            let token = try context.parameters.require("token")
            guard gateway.unregister(token) else { throw unknownDevice(token) }
            return try describe(token, gateway)
        }
        for (path, online) in [("offline", false), ("online", true)] {
            router.post("/devices/:token/\(path)") { _, context in
                let token = try context.parameters.require("token")
                guard gateway.setOnline(token, online) else { throw unknownDevice(token) }
                return try describe(token, gateway)
            }
        }
        router.get("/notifications") { request, _ in
            NotificationList(
                results: log.entries(deviceToken: request.uri.queryParameters["deviceToken"].map(String.init)),
                forgotten: log.forgottenCount)
        }
        router.post("/failures") { request, context -> HTTPResponse.Status in
            let body = try await decode(
                FailureRequest.self, request, context,
                example:
                    #"{"deviceToken": "…", "status": 429, "reason": "TooManyRequests", "delayMilliseconds": 0, "count": 1}"#
            )
            if let problem = FaultInjector.problem(with: body.failure) {
                throw HTTPError(.badRequest, message: problem)
            }
            faults.inject(body.failure, for: body.deviceToken)
            return .noContent
        }
        router.post("/rate-limits") { request, context -> HTTPResponse.Status in
            let body = try await decode(
                RateLimitRequest.self, request, context,
                example:
                    #"{"deviceToken": "…", "requestsPerSecond": 2, "burst": 2} (null requestsPerSecond removes it)"#)
            let limit = body.requestsPerSecond.map { FaultInjector.RateLimit(requestsPerSecond: $0, burst: body.burst) }
            if let limit, let problem = FaultInjector.problem(with: limit) {
                throw HTTPError(.badRequest, message: problem)
            }
            faults.limit(body.deviceToken, to: limit)
            return .noContent
        }
        router.post("/certificates") { request, context -> EditedResponse<IssuedResponse> in
            let body = try await decode(
                CertificateRequest.self, request, context,
                example: #"{"bundleId": "com.example.app", "environment": "sandbox"}"#)
            if let problem = PushCertificateIssuer.problem(bundleId: body.bundleId) {
                throw HTTPError(.badRequest, message: problem)
            }
            let environments: Set<String>
            switch body.environment ?? "sandbox" {
            case "sandbox": environments = ["sandbox"]
            case "production": environments = ["production"]
            case "universal": environments = ["sandbox", "production"]
            case let other:
                throw HTTPError(
                    .badRequest, message: "environment must be sandbox, production or universal, not '\(other)'")
            }
            let issued: PushCertificateIssuer.Issued
            do {
                issued = try certificates.issue(
                    bundleId: body.bundleId, environments: environments,
                    passphrase: body.p12Passphrase ?? PushCertificateIssuer.defaultPassphrase)
            } catch let refusal as CertificateRequestError {
                throw HTTPError(.badRequest, message: refusal.description)
            }
            return EditedResponse(
                status: .created,
                response: IssuedResponse(
                    certificateFile: issued.certificateFile, keyFile: issued.keyFile, combinedFile: issued.combinedFile,
                    cerFile: issued.cerFile, p12File: issued.p12File))
        }
        router.post("/reset") { _, _ -> HTTPResponse.Status in
            gateway.reset()
            log.removeAll()
            faults.reset()
            return .noContent
        }
        return ControlAPI(
            listener: HTTPListener(
                router: router, host: host, port: port, service: "apns.control", setting: ("apns", "controlPort"),
                timeline: timeline, limits: limits, logger: logger))
    }

    private static func decode<T: Decodable>(
        _ type: T.Type, _ request: Request, _ context: BasicRequestContext, example: String
    ) async throws -> T {
        do {
            return try await request.decode(as: type, context: context)
        } catch {
            throw HTTPError(.badRequest, message: "expected a JSON body like \(example)")
        }
    }

    private static func describe(_ token: String, _ gateway: DeviceGateway) throws -> DeviceResponse {
        guard let record = gateway.device(token) else { throw unknownDevice(token) }
        return DeviceResponse(
            deviceToken: token, topic: record.topic, environment: record.environment, online: gateway.isOnline(token),
            unregisteredAt: record.unregisteredAt.map { Int64($0.timeIntervalSince1970 * 1000) })
    }

    private static func unknownDevice(_ token: String) -> HTTPError {
        HTTPError(.notFound, message: "no device with token \(token); register one with POST /devices")
    }

}
