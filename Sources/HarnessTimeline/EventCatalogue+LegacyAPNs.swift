/// What FakeAPNs's legacy binary gateway and feedback service did. A part of ``EventCatalogue/all``
/// of its own, after the HTTP/2 provider API's events. A notification the gateway takes is on the
/// timeline as `apns.request.accepted`, as one from the HTTP/2 API is.
extension EventCatalogue {
    static let legacyAPNs: [EventSpec] = [
        EventSpec(
            kind: .apnsLegacyRefused, source: "apns", attributes: ["status", "name", "identifier"],
            meaning:
                "The legacy gateway sent its error response (`status`, Apple's `name` for it, the notification's `identifier`) and closed the connection; what came after on it was dropped."
        ),
        EventSpec(
            kind: .apnsLegacyTruncated, source: "apns", attributes: ["client", "bytes"],
            meaning: "A legacy gateway connection ended in the middle of a command; its `bytes` were dropped."),
        EventSpec(
            kind: .apnsDeliveryCommand, source: "apns",
            attributes: ["apnsId", "deviceToken", "topic", "status", "output"],
            meaning:
                "`services.apns.deliveryCommand` ran for a notification delivered to a device registered through the control API: its exit `status` and what it printed (docs/real-devices.md)."
        ),
        EventSpec(
            kind: .apnsFeedbackRead, source: "apns", attributes: ["topic", "count", "tokens"],
            meaning:
                "A provider read the feedback service: `count` tokens of removed apps on `topic` (comma-separated in `tokens`), now cleared from its list."
        ),
    ]
}
