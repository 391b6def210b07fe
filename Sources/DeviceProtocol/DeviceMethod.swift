/// The method names of device protocol v1 (see docs/device-protocol.md).
public enum DeviceMethod {
    /// The protocol version this build speaks; the `hello` handshake compares it.
    public static let protocolVersion = 1

    // Requests from the app to the device.
    public static let hello = "hello"
    public static let registerForRemoteNotifications = "registerForRemoteNotifications"
    public static let sessionCreate = "session.create"
    public static let downloadTaskResume = "downloadTask.resume"
    /// `cancel()` / `cancel(byProducingResumeData:)`; answered with `{"resumeData"}`.
    public static let downloadTaskCancel = "downloadTask.cancel"
    public static let fetchCompletion = "fetchCompletion"
    public static let backgroundEventsCompletion = "backgroundEventsCompletion"
    public static let localNotificationAdd = "localNotification.add"
    /// `UNUserNotificationCenter.add(_:)`.
    public static let notificationAdd = "notification.add"
    /// `removePendingNotificationRequests(withIdentifiers:)`.
    public static let notificationRemovePending = "notification.removePending"
    /// `beginBackgroundTask(withName:expirationHandler:)`: `{"identifier", "name"}` (the app picks the id).
    public static let backgroundTaskBegin = "backgroundTask.begin"
    /// `endBackgroundTask(_:)`: `{"identifier"}`.
    public static let backgroundTaskEnd = "backgroundTask.end"
    /// `setMinimumBackgroundFetchInterval(_:)`.
    public static let setMinimumBackgroundFetchInterval = "setMinimumBackgroundFetchInterval"
    /// A notification from the app: a line for the run's log.
    public static let log = "log"
    /// A notification from the app: what its screen shows now (`screen`, `title`, `button`, `playbackURL`),
    /// for expectations to check.
    public static let uiState = "ui.state"

    // Notifications and requests from the device to the app.
    public static let applicationDidEnterBackground = "applicationDidEnterBackground"
    public static let applicationWillEnterForeground = "applicationWillEnterForeground"
    public static let applicationDidBecomeActive = "applicationDidBecomeActive"
    public static let applicationWillResignActive = "applicationWillResignActive"
    public static let didReceiveRemoteNotification = "didReceiveRemoteNotification"
    /// `application(_:performFetchWithCompletionHandler:)`: `{"completionId"}`, answered with `fetchCompletion`.
    public static let performFetch = "performFetch"
    /// The user taps a button on the app's screen: `{"button"}` (the harness's stand-in for the UI).
    public static let uiTap = "ui.tap"
    /// The user types text into a field on the app's screen: `{"field", "text"}` (the field's whole
    /// new content, as the keyboard leaves it).
    public static let uiType = "ui.type"
    /// A background task's time ran out: `{"identifier"}`; run its expiration handler and end it at once.
    public static let backgroundTaskExpired = "backgroundTaskExpired"
    /// A request: `userNotificationCenter(_:willPresent:withCompletionHandler:)` for an app in the
    /// foreground; the answer is `{"options": [...]}`.
    public static let willPresentNotification = "willPresentNotification"
    /// `userNotificationCenter(_:didReceive:withCompletionHandler:)`: the user tapped a notification.
    public static let didReceiveNotificationResponse = "didReceiveNotificationResponse"
    public static let didWriteData = "didWriteData"
    /// `urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)`, for a task made from resume data.
    public static let didResumeAtOffset = "didResumeAtOffset"
    /// A request: the device waits for the answer, then deletes the temporary file, as iOS does.
    public static let didFinishDownloadingTo = "didFinishDownloadingTo"
    public static let didCompleteWithError = "didCompleteWithError"
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`: a background session's
    /// events are waiting; the app recreates the session and later calls `backgroundEventsCompletion`.
    public static let handleEventsForBackgroundURLSession = "handleEventsForBackgroundURLSession"
    /// `urlSessionDidFinishEvents(forBackgroundURLSession:)`: every waiting event has been delivered.
    public static let urlSessionDidFinishEvents = "urlSessionDidFinishEvents"
}
