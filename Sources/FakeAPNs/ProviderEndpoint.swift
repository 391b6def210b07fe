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
        // One reading of the clock a request: its token's time window, its log entry, its delivery.
        let receivedAt = Date()
        let environment = connection.environment(authority: fields.authority ?? fields.host)
        let verifier = verifier
        let outcome: Result<AcceptedNotification, APNsReason>
        switch connection.credential {
        case .unusableCertificate:
            outcome = .failure(.badCertificate)
        case .certificate(let certificate):
            outcome = validator.validate(
                request, fields: fields, environment: environment, certificate: certificate,
                newId: { connection.messageIds.make() }, recent: &connection.recent
            ) { _ in nil }
        case .token, nil:
            outcome = validator.validate(
                request, fields: fields, environment: environment, newId: { connection.messageIds.make() },
                recent: &connection.recent
            ) {
                token in
                if case .failure(let reason) = connection.state.authenticate(
                    token, environment: environment, verifier: verifier, now: receivedAt)
                {
                    return reason
                }
                return nil
            }
        }
        let refusal: APNsReason
        var delay = Duration.zero
        // Taken apart, not copied: the notification moves into its AcceptedPush.
        switch consume outcome {
        case .success(let notification):
            let verdict = faults.verdict(for: notification.deviceToken)
            delay = verdict.delay
            guard let refused = verdict.refusal else {
                return accept(
                    AcceptedPush(notification, environment: environment), request: request, at: receivedAt, delay: delay
                )
            }
            refusal = refused
        case .failure(let reason):
            refusal = reason
        }
        // Clients match answers by apns-id, so a refusal echoes the one given, even a malformed one.
        let apnsId = fields.id ?? connection.messageIds.make()
        log.append(request, apnsId: apnsId, outcome: .failure(refusal), receivedAt: receivedAt)
        timeline.publish(
            .apnsRejected, source: "apns",
            ["apnsId": apnsId, "path": fields.path ?? "", "status": "\(refusal.status)", "reason": refusal.reason])
        return Answer(apnsId: apnsId, refusal: refusal, delay: delay)
    }

    /// An accepted push: one object for its events and its log record (AcceptedPush).
    private func accept(_ push: AcceptedPush, request: ProviderRequest, at receivedAt: Date, delay: Duration) -> Answer
    {
        timeline.publish(.apnsAccepted, source: "apns", push.attributes(.accepted))
        let fate = gateway.accept(push, at: receivedAt)
        log.append(request, accepted: push, fate: fate, receivedAt: receivedAt)
        return Answer(apnsId: push.notification.apnsId, refusal: nil, delay: delay)
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
