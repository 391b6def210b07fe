import HarnessTimeline

/// A push APNs accepted, as its log record and its events on the hot path (`apns.request.accepted`,
/// `apns.delivered`) keep it: one object made once a push, that each holds a reference to, instead of
/// a copy of the notification in the record and a list of its strings in each event. Forgetting a
/// record or an event then releases one reference, not each of the push's strings.
final class AcceptedPush: EventAttributeSource {
    /// Which event's fields (the events' views of the push).
    enum View: Int {
        case accepted
        case delivered
        /// Delivered from storage, once the device came back.
        case deliveredFromStore
    }

    let notification: AcceptedNotification
    /// The environment the push was accepted in (only `apns.request.accepted` names it).
    let environment: String

    init(_ notification: AcceptedNotification, environment: String) {
        self.notification = notification
        self.environment = environment
    }

    func attributes(_ view: View) -> EventAttributes { EventAttributes(source: self, view: view.rawValue) }

    func forEachAttribute(view: Int, _ body: (String, String) -> Void) {
        let notification = notification
        body("apnsId", notification.apnsId)
        body("deviceToken", notification.deviceToken)
        if let device = notification.device { body("device", device) }
        body("priority", String(notification.priority))
        let view = View(rawValue: view)
        switch view {
        case .accepted:
            body("topic", notification.topic)
            body("pushType", notification.pushType)
            body("environment", environment)
            body("payload", notification.payload)
        case .delivered, .deliveredFromStore:
            body("stored", view == .deliveredFromStore ? "true" : "false")
            body("collapseId", notification.collapseId ?? "")
        case nil:
            break
        }
    }
}
