import DeviceProtocol
import Foundation
import HarnessTimeline

/// A notification in Notification Center.
struct ShownNotification: Sendable {
    var bundleId: String
    var identifier: String
    var title: String?
    var body: String
    var userInfo: [String: JSONValue]
}

/// The notification centre: alert pushes, local notifications in both of Apple's APIs (docs/ios-rules.md 1.4),
/// the badge, and the user's tap.
extension DeviceSimulator {
    /// The system shows `notification`; one with the identifier of a shown one (an `apns-collapse-id`,
    /// a request identifier) replaces it.
    func show(_ notification: ShownNotification) {
        let index = notificationCenter.firstIndex {
            $0.bundleId == notification.bundleId && $0.identifier == notification.identifier
        }
        if let index { notificationCenter.remove(at: index) }
        notificationCenter.append(notification)
        var attributes: EventAttributes = [
            "bundleId": notification.bundleId, "identifier": notification.identifier, "body": notification.body,
            "replaced": "\(index != nil)", "shownCount": "\(notificationCenter.count)",
        ]
        attributes["title"] = notification.title
        publish(.notificationShown, attributes)
    }

    /// An alert push, shown whatever the app's state unless it is on screen.
    func showNotification(_ bundleId: String, identifier: String, alert: JSONValue, payload: [String: JSONValue]) {
        let body = alert.stringValue ?? alert["body"]?.stringValue ?? alert.jsonString()
        show(
            ShownNotification(
                bundleId: bundleId, identifier: identifier, title: alert["title"]?.stringValue, body: body,
                userInfo: payload))
    }

    /// `presentLocalNotificationNow` (iOS 7): on screen the app handles it itself, with no alert and
    /// no badge; otherwise the system shows it and applies the badge.
    func presentLocalNotification(_ bundleId: String, _ params: LocalNotificationParams) {
        let onScreen = apps[bundleId]?.state.isForeground ?? false
        if !onScreen {
            if let badge = params.applicationIconBadgeNumber { apps[bundleId]?.badge = badge }
            show(
                ShownNotification(
                    bundleId: bundleId, identifier: "local-\(UUID().uuidString)", title: params.alertTitle,
                    body: params.alertBody ?? "", userInfo: params.userInfo ?? [:]))
        }
        var attributes: EventAttributes = ["bundleId": bundleId, "style": "UILocalNotification"]
        attributes["alertBody"] = params.alertBody
        attributes["alertTitle"] = params.alertTitle
        attributes["badge"] = params.applicationIconBadgeNumber.map(String.init)
        attributes["appState"] = apps[bundleId]?.state.name
        attributes["presented"] = "\(!onScreen)"
        publish(.appLocalNotification, attributes)
    }

    /// `UNUserNotificationCenter.add(_:)`: delivered now for a nil trigger, else scheduled; a request
    /// with a pending one's identifier replaces it; the system keeps the soonest-firing 64.
    func addNotificationRequest(_ bundleId: String, _ request: NotificationRequestParams) throws {
        let delay = try request.delay()
        let replaced = apps[bundleId]?.pendingNotifications.removeValue(forKey: request.identifier)
        let trigger = PolicyTimers.Purpose.notificationTrigger(bundleId: bundleId, identifier: request.identifier)
        timers.cancel(trigger)
        guard let delay else {
            Task { await self.deliverNotification(bundleId, request) }
            return
        }
        apps[bundleId]?.pendingNotifications[request.identifier] = (request, policyNow + delay)
        startTimer(trigger, after: delay)
        publish(
            .notificationScheduled,
            [
                "bundleId": bundleId, "identifier": request.identifier, "fireIn": "\(delay)",
                "replaced": "\(replaced != nil)", "pending": "\(apps[bundleId]?.pendingNotifications.count ?? 0)",
            ])
        keepSoonestFiring(bundleId)
    }

    /// "The system keeps the soonest-firing 64 notifications and discards the rest."
    private func keepSoonestFiring(_ bundleId: String, limit: Int = 64) {
        guard let pending = apps[bundleId]?.pendingNotifications, pending.count > limit else { return }
        let latest = pending.sorted { $0.value.fireAt < $1.value.fireAt }.dropFirst(limit)
        for identifier in latest.map(\.key) {
            timers.cancel(.notificationTrigger(bundleId: bundleId, identifier: identifier))
            apps[bundleId]?.pendingNotifications[identifier] = nil
            publish(
                .notificationDiscarded,
                [
                    "bundleId": bundleId, "identifier": identifier,
                    "reason":
                        "the system keeps the soonest-firing \(limit) pending notifications and discards the rest",
                ])
        }
    }

    func removePendingNotifications(_ bundleId: String, _ params: RemovePendingNotificationsParams) {
        for identifier in params.identifiers {
            guard apps[bundleId]?.pendingNotifications.removeValue(forKey: identifier) != nil else { continue }
            timers.cancel(.notificationTrigger(bundleId: bundleId, identifier: identifier))
            publish(
                .notificationDiscarded,
                ["bundleId": bundleId, "identifier": identifier, "reason": "removePendingNotificationRequests"])
        }
    }

    func notificationTriggerFired(_ bundleId: String, identifier: String) async {
        guard let entry = apps[bundleId]?.pendingNotifications.removeValue(forKey: identifier) else { return }
        await deliverNotification(bundleId, entry.request)
    }

    /// A UserNotifications delivery: on screen the app's `willPresent` decides how it is presented (no
    /// answer is no presentation); otherwise the system shows it and applies the badge.
    private func deliverNotification(_ bundleId: String, _ request: NotificationRequestParams) async {
        guard let record = apps[bundleId] else { return }
        let content = NotificationParams(
            identifier: request.identifier, title: request.title, body: request.body, userInfo: request.userInfo ?? [:])
        var options = ["system"]
        if record.state.isForeground, let connection = record.connection {
            let answer = try? await connection.request(
                DeviceMethod.willPresentNotification, content, timeout: .seconds(5)
            ).decode(PresentationOptions.self)
            options = answer?.options ?? []
        }
        let system = options == ["system"]
        if system || options.contains("badge"), let badge = request.badge { apps[bundleId]?.badge = badge }
        if system || options.contains("banner") || options.contains("list") {
            show(
                ShownNotification(
                    bundleId: bundleId, identifier: request.identifier, title: request.title, body: request.body ?? "",
                    userInfo: request.userInfo ?? [:]))
        }
        var attributes: EventAttributes = [
            "bundleId": bundleId, "style": "UserNotifications", "identifier": request.identifier,
            "appState": apps[bundleId]?.state.name ?? "",
            "presentation": options.isEmpty ? "none" : options.joined(separator: ","),
        ]
        attributes["title"] = request.title
        attributes["body"] = request.body
        attributes["badge"] = request.badge.map(String.init)
        publish(.appLocalNotification, attributes)
    }

    /// The user taps the app's newest notification: it leaves Notification Center, the app comes to
    /// the foreground (launched if need be) and receives the response.
    public func tapNotification(_ bundleId: String) async throws {
        try requireUnlocked("tap a notification of \(bundleId)")
        let record = try record(bundleId)
        guard let index = notificationCenter.lastIndex(where: { $0.bundleId == bundleId }) else {
            throw DeviceError("\(bundleId) has no notification in Notification Center to tap")
        }
        let notification = notificationCenter.remove(at: index)
        publish(
            .notificationTapped,
            ["bundleId": bundleId, "identifier": notification.identifier, "body": notification.body])
        apps[bundleId]?.pendingResponse = NotificationParams(
            identifier: notification.identifier, title: notification.title, body: notification.body,
            userInfo: notification.userInfo, actionIdentifier: "com.apple.UNNotificationDefaultActionIdentifier")
        switch record.state {
        case .notRunning:
            try await launch(bundleId, reason: .user)
        case .background, .suspended:
            try await bringToForeground(bundleId)
        case .active, .inactive, .launching:
            deliverPendingResponse(bundleId)
        }
    }

    func pendingNotificationCount(_ bundleId: String) -> Int { apps[bundleId]?.pendingNotifications.count ?? 0 }

    /// The number on the app's icon.
    public func badge(of bundleId: String) -> Int? { apps[bundleId]?.badge }

    /// The user taps a button on the app's screen, named by its label.
    public func tap(_ bundleId: String, button: String) throws {
        try requireUnlocked("tap \(button) in \(bundleId)")
        let record = try record(bundleId)
        guard record.state.isForeground, let connection = record.connection else {
            throw DeviceError("\(bundleId) is not on screen (\(record.state)): its buttons cannot be tapped")
        }
        publish("device.ui.tapped", ["bundleId": bundleId, "button": button])
        connection.notify(DeviceMethod.uiTap, UITapParams(button: button))
    }

    /// Hands a tap to the app once it is on screen and connected.
    func deliverPendingResponse(_ bundleId: String) {
        guard let record = apps[bundleId], record.state.isForeground, let connection = record.connection,
            let response = record.pendingResponse
        else { return }
        apps[bundleId]?.pendingResponse = nil
        connection.notify(DeviceMethod.didReceiveNotificationResponse, response)
    }
}
