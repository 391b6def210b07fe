import Foundation
import HarnessTimeline

/// The provider API's decisions, shared by every connection: validate, apply injected faults, record,
/// hand to the gateway.
final class ProviderEndpoint: Sendable {
    /// How one request ends: the outcome, and how long to wait before answering.
    struct Answer {
        var apnsId: String
        /// Why the request was refused; nil: accepted.
        var refusal: APNsReason?
        var delay: Duration
    }

    let gateway: DeviceGateway
    let log: NotificationLog
    let faults: FaultInjector
    private let validator: ProviderRequestValidator
    private let verifier: ProviderTokenVerifier
    let timeline: Timeline

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
        let fields = request.fields
        let environment = Self.environment(authority: fields.authority ?? fields.host, default: connection.environment)
        let verifier = verifier
        var outcome: Result<AcceptedNotification, APNsReason>
        switch connection.credential {
        case .unusableCertificate:
            outcome = .failure(.badCertificate)
        case .certificate(let certificate):
            outcome = validator.validate(
                request, fields: fields, environment: environment, certificate: certificate,
                newId: { connection.messageIds.make() }
            ) { _ in nil }
        case .token, nil:
            outcome = validator.validate(
                request, fields: fields, environment: environment, newId: { connection.messageIds.make() }
            ) {
                token in
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
        switch outcome {
        case .success(let notification):
            let apnsId = notification.apnsId
            // One object for the push's events and its log record (AcceptedPush).
            let push = AcceptedPush(notification, environment: environment)
            timeline.publish(.apnsAccepted, source: "apns", push.attributes(.accepted))
            let fate = gateway.accept(notification, fields: push)
            log.append(request, accepted: push, fate: fate)
            return Answer(apnsId: apnsId, refusal: nil, delay: delay)
        case .failure(let reason):
            // Clients match answers by apns-id, so a refusal echoes the one given, even a malformed one.
            let apnsId = fields.id ?? connection.messageIds.make()
            log.append(request, apnsId: apnsId, outcome: consume outcome)
            timeline.publish(
                .apnsRejected, source: "apns",
                ["apnsId": apnsId, "path": fields.path ?? "", "status": "\(reason.status)", "reason": reason.reason])
            return Answer(apnsId: apnsId, refusal: reason, delay: delay)
        }
    }

    /// A request whose header block broke HTTP/2's rules: its stream was reset before the provider API
    /// saw it.
    func malformed(_ problem: String, stream: Int32) {
        timeline.publish("apns.request.malformed", source: "apns", ["stream": "\(stream)", "problem": problem])
    }

    /// Apple's host names decide the environment; any other authority (localhost, an IP) gets the
    /// listener's.
    static func environment(authority: String?, default fallback: String) -> String {
        guard let authority else { return fallback }
        let host = authority.utf8.firstIndex(of: UInt8(ascii: ":")).map { authority[..<$0] } ?? authority[...]
        // Most requests name an address or localhost: only a name as long as one of Apple's is compared.
        guard [18, 26, 30].contains(host.utf8.count) else { return fallback }
        switch host.lowercased() {
        case "api.push.apple.com": return "production"
        case "api.sandbox.push.apple.com", "api.development.push.apple.com": return "sandbox"
        default: return fallback
        }
    }
}
