import Foundation
import HarnessTimeline

/// The provider API's decisions, shared by every connection: validate, apply injected faults, record,
/// hand to the gateway.
final class ProviderEndpoint: Sendable {
    /// How one request ends: the outcome, and how long to wait before answering.
    struct Answer {
        var apnsId: String
        var outcome: Result<AcceptedNotification, APNsReason>
        var delay: Duration
    }

    let gateway: DeviceGateway
    let log: NotificationLog
    let faults: FaultInjector
    private let validator: ProviderRequestValidator
    private let verifier: ProviderTokenVerifier
    private let timeline: Timeline

    init(
        verifier: ProviderTokenVerifier, gateway: DeviceGateway, log: NotificationLog, faults: FaultInjector,
        timeline: Timeline
    ) {
        self.verifier = verifier
        self.validator = ProviderRequestValidator { gateway.device($0) }
        self.gateway = gateway
        self.log = log
        self.faults = faults
        self.timeline = timeline
    }

    func handle(_ request: ProviderRequest, connection: ProviderConnection) -> Answer {
        let environment = Self.environment(
            authority: request.first(":authority") ?? request.first("host"), default: connection.environment)
        let verifier = verifier
        var outcome: Result<AcceptedNotification, APNsReason>
        switch connection.credential {
        case .unusableCertificate:
            outcome = .failure(.badCertificate)
        case .certificate(let certificate):
            outcome = validator.validate(request, environment: environment, certificate: certificate) { _ in nil }
        case .token, nil:
            outcome = validator.validate(request, environment: environment) { token in
                if case .failure(let reason) = connection.state.authenticate(
                    token, environment: environment, verifier: verifier)
                {
                    return reason
                }
                return nil
            }
        }
        var delay = Duration.zero
        if case .success(let notification) = outcome {
            let verdict = faults.verdict(for: notification.deviceToken)
            delay = verdict.delay
            if let refusal = verdict.refusal { outcome = .failure(refusal) }
        }
        let apnsId: String
        switch outcome {
        case .success(let notification): apnsId = notification.apnsId
        // Clients match answers by apns-id, so a refusal echoes the one given, even a malformed one.
        case .failure: apnsId = request.first("apns-id") ?? validator.makeId()
        }
        log.append(request, apnsId: apnsId, outcome: outcome)
        switch outcome {
        case .success(let notification):
            timeline.publish(
                .apnsAccepted, source: "apns",
                [
                    "apnsId": apnsId, "deviceToken": notification.deviceToken, "topic": notification.topic,
                    "pushType": notification.pushType, "priority": "\(notification.priority)",
                    "environment": environment, "payload": notification.payload,
                ])
            gateway.accept(notification)
        case .failure(let reason):
            timeline.publish(
                .apnsRejected, source: "apns",
                ["apnsId": apnsId, "path": request.first(":path") ?? "", "status": "\(reason.status)", "reason": reason.reason])
        }
        return Answer(apnsId: apnsId, outcome: outcome, delay: delay)
    }

    /// Apple's host names decide the environment; any other authority (localhost, an IP) gets the
    /// listener's.
    static func environment(authority: String?, default fallback: String) -> String {
        let host = authority.map { String($0.split(separator: ":").first ?? "") }?.lowercased()
        switch host {
        case "api.push.apple.com": return "production"
        case "api.sandbox.push.apple.com", "api.development.push.apple.com": return "sandbox"
        default: return fallback
        }
    }
}
