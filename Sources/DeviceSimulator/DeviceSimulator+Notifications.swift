import DeviceProtocol
import Foundation
import HarnessTimeline

/// The notification centre: alert pushes, local notifications in both of Apple's APIs (docs/ios-rules.md 1.4),
/// the badge, and the user's tap.
extension DeviceSimulator {
    /// The system shows `notification`; one with the identifier of a shown one (an `apns-collapse-id`,
    /// a request identifier) replaces it.
    func show(_ notification: ShownNotification) {
        let replaced = notifications.show(notification)
        var attributes: EventAttributes = [
            "bundleId": notification.bundleId, "identifier": notification.identifier, "body": notification.body,
            "replaced": "\(replaced)", "shownCount": "\(notifications.shown.count)",
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
            if let badge = params.applicationIconBadgeNumber { notifications.setBadge(badge, of: bundleId) }
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
        let trigger = PolicyTimers.Purpose.notificationTrigger(bundleId: bundleId, identifier: request.identifier)
        timers.cancel(trigger)
        guard let delay else {
            notifications.unschedule(request.identifier, of: bundleId)
            work.start { await self.deliverNotification(bundleId, request) }
            return
        }
        let (replaced, discarded) = notifications.schedule(request, for: bundleId, fireAt: policyNow + delay)
        startTimer(trigger, after: delay)
        publish(
            .notificationScheduled,
            [
                "bundleId": bundleId, "identifier": request.identifier, "fireIn": "\(delay)",
                "replaced": "\(replaced)",
                "pending": "\(notifications.pendingCount(of: bundleId) + discarded.count)",
            ])
        for identifier in discarded {
            timers.cancel(.notificationTrigger(bundleId: bundleId, identifier: identifier))
            publish(
                .notificationDiscarded,
                [
                    "bundleId": bundleId, "identifier": identifier,
                    "reason":
                        "the system keeps the soonest-firing \(SystemNotificationCenter.mostPending) pending notifications and discards the rest",
                ])
        }
    }

    func removePendingNotifications(_ bundleId: String, _ params: RemovePendingNotificationsParams) {
        for identifier in params.identifiers {
            guard notifications.unschedule(identifier, of: bundleId) else { continue }
            timers.cancel(.notificationTrigger(bundleId: bundleId, identifier: identifier))
            publish(
                .notificationDiscarded,
                ["bundleId": bundleId, "identifier": identifier, "reason": "removePendingNotificationRequests"])
        }
    }

    func notificationTriggerFired(_ bundleId: String, identifier: String) async {
        guard let request = notifications.fire(identifier, of: bundleId) else { return }
        await deliverNotification(bundleId, request)
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
        if system || options.contains("badge"), let badge = request.badge {
            notifications.setBadge(badge, of: bundleId)
        }
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
        guard let notification = notifications.tapNewest(of: bundleId) else {
            throw DeviceError.noNotification(bundleId: bundleId)
        }
        publish(
            .notificationTapped,
            ["bundleId": bundleId, "identifier": notification.identifier, "body": notification.body])
        switch record.state {
        case .notRunning:
            try await launch(bundleId, reason: .user)
        case .background, .suspended:
            try await bringToForeground(bundleId)
        case .active, .inactive, .launching:
            deliverPendingResponse(bundleId)
        }
    }

    func pendingNotificationCount(_ bundleId: String) -> Int { notifications.pendingCount(of: bundleId) }

    /// The number on the app's icon.
    public func badge(of bundleId: String) -> Int? { apps[bundleId] == nil ? nil : notifications.badge(of: bundleId) }

    /// The user taps a button on the app's screen, named by its label.
    public func tap(_ bundleId: String, button: String) throws {
        try requireUnlocked("tap \(button) in \(bundleId)")
        let record = try record(bundleId)
        guard record.state.isForeground, let connection = record.connection else {
            throw DeviceError.notOnScreen(bundleId: bundleId, state: "\(record.state)", typing: false)
        }
        publish("device.ui.tapped", ["bundleId": bundleId, "button": button])
        connection.notify(DeviceMethod.uiTap, UITapParams(button: button))
    }

    /// The user types `text` into the field named `field` on the app's screen.
    public func type(_ bundleId: String, field: String, text: String) throws {
        try requireUnlocked("type into \(field) in \(bundleId)")
        let record = try record(bundleId)
        guard record.state.isForeground, let connection = record.connection else {
            throw DeviceError.notOnScreen(bundleId: bundleId, state: "\(record.state)", typing: true)
        }
        publish("device.ui.typed", ["bundleId": bundleId, "field": field, "text": text])
        connection.notify(DeviceMethod.uiType, UITypeParams(field: field, text: text))
    }

    /// Hands a tap to the app once it is on screen and connected.
    func deliverPendingResponse(_ bundleId: String) {
        guard let record = apps[bundleId], record.state.isForeground, let connection = record.connection,
            let response = notifications.takeResponse(of: bundleId)
        else { return }
        connection.notify(DeviceMethod.didReceiveNotificationResponse, response)
    }
}
