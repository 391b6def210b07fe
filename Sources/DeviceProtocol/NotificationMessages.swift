import Foundation

// The messages of the notification centre: local notifications, their requests and responses.

public struct LocalNotificationParams: Codable, Sendable, Equatable {
    public var alertBody: String?
    public var alertTitle: String?
    public var applicationIconBadgeNumber: Int?
    public var soundName: String?
    public var userInfo: [String: JSONValue]?

    public init(
        alertBody: String? = nil, alertTitle: String? = nil, applicationIconBadgeNumber: Int? = nil,
        soundName: String? = nil, userInfo: [String: JSONValue]? = nil
    ) {
        self.alertBody = alertBody
        self.alertTitle = alertTitle
        self.applicationIconBadgeNumber = applicationIconBadgeNumber
        self.soundName = soundName
        self.userInfo = userInfo
    }
}

/// `notification.add`: a `UNNotificationRequest`. `timeInterval` is a `UNTimeIntervalNotificationTrigger`
/// in seconds (more than 0); nil is a nil trigger, delivered now.
public struct NotificationRequestParams: Codable, Sendable, Equatable {
    public var identifier: String
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var userInfo: [String: JSONValue]?
    public var timeInterval: Double?

    public init(
        identifier: String, title: String? = nil, subtitle: String? = nil, body: String? = nil, badge: Int? = nil,
        sound: String? = nil, userInfo: [String: JSONValue]? = nil, timeInterval: Double? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.userInfo = userInfo
        self.timeInterval = timeInterval
    }
}

public struct RemovePendingNotificationsParams: Codable, Sendable, Equatable {
    public var identifiers: [String]
    public init(identifiers: [String]) { self.identifiers = identifiers }
}

/// A delivered notification as the app sees it (`willPresentNotification`) or as the user tapped it
/// (`didReceiveNotificationResponse`, with `actionIdentifier`).
public struct NotificationParams: Codable, Sendable, Equatable {
    public var identifier: String
    public var title: String?
    public var body: String?
    public var userInfo: [String: JSONValue]
    /// `UNNotificationDefaultActionIdentifier` for a tap on the notification itself.
    public var actionIdentifier: String?

    public init(
        identifier: String, title: String?, body: String?, userInfo: [String: JSONValue],
        actionIdentifier: String? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.body = body
        self.userInfo = userInfo
        self.actionIdentifier = actionIdentifier
    }
}

/// The answer to `willPresentNotification`: `banner`, `list`, `sound`, `badge` (none: not shown).
public struct PresentationOptions: Codable, Sendable, Equatable {
    public var options: [String]
    public init(options: [String]) { self.options = options }
}
