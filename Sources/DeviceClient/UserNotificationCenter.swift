import DeviceProtocol

/// `UNMutableNotificationContent`.
public struct NotificationContent: Sendable {
    public var title: String?
    public var subtitle: String?
    public var body: String?
    public var badge: Int?
    public var sound: String?
    public var userInfo: [String: JSONValue] = [:]

    public init() {}
}

/// `UNNotificationRequest` with a `UNTimeIntervalNotificationTrigger` (seconds, more than 0) or a nil
/// trigger (delivered now).
public struct NotificationRequest: Sendable {
    public var identifier: String
    public var content: NotificationContent
    public var timeInterval: Double?

    public init(identifier: String, content: NotificationContent, timeInterval: Double? = nil) {
        self.identifier = identifier
        self.content = content
        self.timeInterval = timeInterval
    }
}

/// A delivered notification (`UNNotification`), as `willPresent` and a tap's response see it.
public struct DeliveredNotification: Sendable {
    public var identifier: String
    public var title: String?
    public var body: String?
    public var userInfo: [String: JSONValue]
}

/// `UNNotificationPresentationOptions`.
public struct PresentationOption: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let banner = PresentationOption(rawValue: 1)
    public static let list = PresentationOption(rawValue: 2)
    public static let sound = PresentationOption(rawValue: 4)
    public static let badge = PresentationOption(rawValue: 8)

    var names: [String] {
        [(Self.banner, "banner"), (.list, "list"), (.sound, "sound"), (.badge, "badge")].filter { contains($0.0) }.map(
            \.1)
    }
}

/// `UNUserNotificationCenterDelegate`.
@MainActor
public protocol UserNotificationCenterDelegate: AnyObject {
    /// The app is on screen: how to present the notification. Not implemented: not presented.
    func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: DeliveredNotification,
        withCompletionHandler completionHandler: @escaping @MainActor (PresentationOption) -> Void)
    /// The user tapped the notification (`actionIdentifier` is `UNNotificationDefaultActionIdentifier`).
    func userNotificationCenter(
        _ center: UserNotificationCenter, didReceive notification: DeliveredNotification, actionIdentifier: String,
        withCompletionHandler completionHandler: @escaping @MainActor () -> Void)
}

extension UserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: DeliveredNotification,
        withCompletionHandler completionHandler: @escaping @MainActor (PresentationOption) -> Void
    ) {
        completionHandler([])
    }
    public func userNotificationCenter(
        _ center: UserNotificationCenter, didReceive notification: DeliveredNotification, actionIdentifier: String,
        withCompletionHandler completionHandler: @escaping @MainActor () -> Void
    ) {
        completionHandler()
    }
}

/// `UNUserNotificationCenter` for apps under test.
@MainActor
public final class UserNotificationCenter {
    public weak var delegate: (any UserNotificationCenterDelegate)?
    let application: Application

    init(application: Application) { self.application = application }

    /// `UNUserNotificationCenter.current()`.
    public static func current() -> UserNotificationCenter { Application.shared.notificationCenter }

    /// `add(_:)`: a request with a pending one's identifier replaces it.
    public func add(_ request: NotificationRequest) {
        let content = request.content
        application.send(
            DeviceMethod.notificationAdd,
            NotificationRequestParams(
                identifier: request.identifier, title: content.title, subtitle: content.subtitle, body: content.body,
                badge: content.badge, sound: content.sound, userInfo: content.userInfo,
                timeInterval: request.timeInterval))
    }

    /// `removePendingNotificationRequests(withIdentifiers:)`.
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        application.send(
            DeviceMethod.notificationRemovePending, RemovePendingNotificationsParams(identifiers: identifiers))
    }

    /// Asks the delegate, answering the device with the options; no delegate: the system's own
    /// options (shown, with sound and badge), as Apple documents.
    func willPresent(_ params: NotificationParams, answer: @escaping @MainActor ([String]) -> Void) {
        guard let delegate else {
            answer(["banner", "list", "sound", "badge"])
            return
        }
        var answered = false
        delegate.userNotificationCenter(self, willPresent: DeliveredNotification(params)) { options in
            guard !answered else { return }
            answered = true
            answer(options.names)
        }
    }

    func didReceive(_ params: NotificationParams) {
        delegate?.userNotificationCenter(
            self, didReceive: DeliveredNotification(params),
            actionIdentifier: params.actionIdentifier ?? "com.apple.UNNotificationDefaultActionIdentifier"
        ) {}
    }
}

extension DeliveredNotification {
    init(_ params: NotificationParams) {
        self.init(identifier: params.identifier, title: params.title, body: params.body, userInfo: params.userInfo)
    }
}
