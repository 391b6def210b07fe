import DeviceProtocol

/// `UILocalNotification`, the iOS 7 style the NASA TV tutorial uses.
public struct LocalNotification: Sendable {
    public var alertBody: String?
    public var alertTitle: String?
    public var applicationIconBadgeNumber: Int?
    public var soundName: String?
    public var userInfo: [String: JSONValue]?

    public init() {}

    var parameters: LocalNotificationParams {
        LocalNotificationParams(
            alertBody: alertBody, alertTitle: alertTitle, applicationIconBadgeNumber: applicationIconBadgeNumber,
            soundName: soundName, userInfo: userInfo)
    }
}
