/// What FakeParse did: installations saved, pushes accepted, scheduled, sent to each device, and their
/// `_PushStatus` at the end. A part of ``EventCatalogue/all`` of its own, in its place after the
/// harness's events.
extension EventCatalogue {
    static let parse: [EventSpec] = [
        EventSpec(
            kind: .parseInstallationSaved, source: "parse",
            attributes: ["objectId", "created", "deviceToken", "appIdentifier", "deviceType"],
            meaning: "FakeParse saved an installation: created (`created` is true) or updated."),
        EventSpec(
            kind: .parsePushAccepted, source: "parse", attributes: ["pushStatusId", "recipients", "body"],
            meaning: "FakeParse accepted `POST /parse/push`; it will send to `recipients` iOS installations."),
        EventSpec(
            kind: .parsePushSent, source: "parse",
            attributes: ["pushStatusId", "installation", "deviceToken", "apnsId"],
            meaning: "APNs answered 200 to the push FakeParse sent for one installation."),
        EventSpec(
            kind: .parsePushFailed, source: "parse", attributes: ["pushStatusId", "deviceToken"],
            optional: ["status", "reason", "error"],
            meaning: "A push to one installation failed: APNs refused it (`status`, `reason`) or failed (`error`)."),
        EventSpec(
            kind: .parsePushScheduled, source: "parse", attributes: ["pushStatusId", "pushTime"],
            meaning:
                "FakeParse will send the push at `pushTime` (`push_time`); its `_PushStatus` is `scheduled` until then. Published again when a restarted FakeParse takes the push up."
        ),
        EventSpec(
            kind: .parsePushStatus, source: "parse",
            attributes: ["pushStatusId", "status", "numSent", "numFailed"], optional: ["errorMessage"],
            meaning:
                "The push is done: `succeeded` once every installation was tried (the counts say how many APNs took), or `failed` (`errorMessage`) when it could not be sent at all, such as expired before its time."
        ),
        EventSpec(
            kind: .parseStoreFailed, source: "parse", attributes: ["pushStatusId", "what", "error"],
            meaning:
                "SQLite refused a write FakeParse made for a push after answering its client (`what`: a batch's outcomes, the final status, forgetting dead tokens); what it says is not stored."
        ),
    ]
}
