/// What the run's network conditions did: links changed, pushes the push channel dropped, held or
/// sent twice. A part of ``EventCatalogue/all`` of its own; the fault proxy's own events (on the TCP
/// links, each proxy named after its link) are in ``EventCatalogue/proxy``.
extension EventCatalogue {
    static let network: [EventSpec] = [
        EventSpec(
            kind: .networkLinkChanged, source: "network", attributes: ["link", "condition"],
            meaning:
                "A link (`app-parse`, `backend-parse`, `parse-apns`, `apns-device`, `transfer-media`, `app-media`) took a new condition: a profile, `down`, its own toxics or push faults, or `clear`."
        ),
        EventSpec(
            kind: .networkPushDropped, source: "network", attributes: ["link", "apnsId", "why"],
            meaning: "The push channel lost a push APNs handed over: the device never gets it."),
        EventSpec(
            kind: .networkPushDelayed, source: "network", attributes: ["link", "apnsId", "delay"],
            meaning:
                "The push channel holds a push `delay` (its profile's downlink, its loss, its own delay) before the device gets it."
        ),
        EventSpec(
            kind: .networkPushDuplicated, source: "network", attributes: ["link", "apnsId"],
            meaning: "The push channel hands the device the same push twice."),
    ]
}

extension EventKind {
    /// A link took a new condition (`condition`: its summary).
    public static let networkLinkChanged: EventKind = "network.link.changed"
    public static let networkPushDropped: EventKind = "network.push.dropped"
    public static let networkPushDelayed: EventKind = "network.push.delayed"
    public static let networkPushDuplicated: EventKind = "network.push.duplicated"
}
