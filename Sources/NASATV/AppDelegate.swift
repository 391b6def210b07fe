import DeviceClient
import Foundation
import Synchronization

@MainActor
final class AppDelegate: ApplicationDelegate, UserNotificationCenterDelegate {
    /// Mistakes the app can be built with, so the harness can be seen catching each.
    enum Bug: String, CaseIterable {
        /// Never calls the silent push's fetch completion handler: the 30 s watchdog kills the app.
        case neverCallsCompletionHandler = "never-calls-completion-handler"
        /// Never calls the handler of `handleEventsForBackgroundURLSession`.
        case neverCallsEventsHandler = "never-calls-events-handler"
        /// Leaves the downloaded file where `didFinishDownloadingTo` put it: it is deleted.
        case leavesTemporaryFile = "leaves-temp-file"
        /// Downloads in a default session, whose task dies with the app.
        case defaultSession = "default-session"
        /// Begins a background task on leaving the foreground and never ends it.
        case neverEndsBackgroundTask = "never-ends-background-task"
        /// Shows the default title whatever `photoTitle` the push named.
        case ignoresPhotoTitle = "ignores-photo-title"
        /// Moves finished downloads to `Documents/` instead of `Library/Caches/`.
        case savesInDocuments = "saves-in-documents"
        /// Does not recreate its background sessions at launch, so it never hears how a download ended
        /// while it was not running (a force-quit's -999, for one).
        case noSessionAtLaunch = "no-session-at-launch"
        /// Plays the video from the server even when the downloaded file is there.
        case playsRemoteURL = "plays-remote-url"
        /// Does nothing when the user taps one of its notifications.
        case ignoresNotificationTap = "ignores-notification-tap"
        /// Asks for no presentation of its notifications while on screen (`willPresent` with []).
        case noBanner = "no-banner"
        /// Gives up on its installation save at the first failure instead of retrying as the SDK does.
        case noParseRetry = "no-parse-retry"
    }

    let bugs: Set<Bug>
    /// The fixed flow: start the background download, call the fetch completion handler at once, and
    /// post the notification when the session's events arrive (the tutorial waits for the download,
    /// which a slow network turns into a watchdog kill).
    let completesFetchAtOnce: Bool
    /// Post the photo's notification with UserNotifications rather than `presentLocalNotificationNow`.
    let usesUserNotifications: Bool
    /// Seconds of work to finish under a background task after leaving the foreground (nil: none).
    let backgroundWork: Double?
    /// Each Parse request's timeout, in seconds.
    let parseTimeout: Double
    let environment = ProcessInfo.processInfo.environment
    /// The tutorial keeps the silent push's handler on the app delegate until the photo is in.
    var silentRemoteNotificationCompletionHandler: (@MainActor (BackgroundFetchResult) -> Void)?
    /// The handlers of `handleEventsForBackgroundURLSession`, per session, called once its events are in.
    var backgroundSessionCompletionHandlers: [String: @MainActor () -> Void] = [:]
    var photoDownloader: BackgroundDownloader?
    var videoDownloader: BackgroundDownloader?
    /// The title the push named for the photo on its way (`photoTitle` in the payload).
    var photoTitle: String?
    static let defaultPhotoTitle = "Astronomy Picture of the Day"

    init(
        bugs: Set<Bug>, completesFetchAtOnce: Bool, usesUserNotifications: Bool, backgroundWork: Double?,
        parseTimeout: Double = 60
    ) {
        self.parseTimeout = parseTimeout
        self.bugs = bugs
        self.completesFetchAtOnce = completesFetchAtOnce
        self.usesUserNotifications = usesUserNotifications
        self.backgroundWork = backgroundWork
    }

    /// Finishes some work (saving state, say) under a background task, as Apple advises.
    func applicationDidEnterBackground(_ application: Application) {
        if bugs.contains(.neverEndsBackgroundTask) {
            _ = application.beginBackgroundTask(withName: "save state") {}
            return
        }
        guard let backgroundWork else { return }
        // The expiration handler needs the identifier beginBackgroundTask returns, as in Apple's pattern.
        let identifier = BackgroundTaskIdentifier()
        identifier.value = application.beginBackgroundTask(withName: "save state") {
            application.endBackgroundTask(identifier.value)
        }
        Task {
            try? await Task.sleep(for: .milliseconds(Int64(backgroundWork * 1000)))
            application.log("state saved")
            application.endBackgroundTask(identifier.value)
        }
    }

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
        application.log("launched (\(launchOptions.reason))")
        UserNotificationCenter.current().delegate = self
        // Recreating the background session at launch is how the app hears about a download that
        // ended while it was not running (a force-quit's cancellation, for one).
        if !bugs.contains(.noSessionAtLaunch) { _ = downloader(application) }
        let videos = videoDownloader(application, recreatingSession: !bugs.contains(.noSessionAtLaunch))
        if launchOptions.reason == "user" {
            // The tutorial's first screen: the NASA TV video, to download or play.
            let downloaded = FileManager.default.fileExists(atPath: videos.destination.path)
            application.showUI(screen: "videos", title: "NASA TV", button: downloaded ? "Downloaded" : "Download")
        }
        // As objc.io's example: fetch as often as the system allows.
        application.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalMinimum)
        application.registerForRemoteNotifications()
        return true
    }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        let installation = ParseInstallation(
            environment: environment, container: application.container, deviceToken: deviceToken.hexString,
            appIdentifier: application.bundleIdentifier, timeout: parseTimeout,
            attempts: bugs.contains(.noParseRetry) ? 1 : 5)
        Task {
            do {
                try await installation.saveInBackground { message in await application.log(message) }
                application.log("installation saved")
            } catch {
                application.log("installation not saved: \(error)")
            }
        }
    }

    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        application.log("push registration failed: \(error)")
    }

    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
        fetchCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
    ) {
        guard userInfo["aps"]?["content-available"]?.numberValue == 1 else {
            completionHandler(.noData)
            return
        }
        photoTitle = bugs.contains(.ignoresPhotoTitle) ? nil : userInfo["photoTitle"]?.stringValue
        fetchDailyPhoto(application, completionHandler: completionHandler)
    }

    /// Background fetch: the same download of the daily photo as a silent push starts.
    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
    ) {
        application.log("performFetchWithCompletionHandler")
        fetchDailyPhoto(application, completionHandler: completionHandler)
    }

    private func fetchDailyPhoto(
        _ application: Application, completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
    ) {
        guard let base = environment["HARNESS_MEDIA_URL"], let url = URL(string: base + "/photos/dailyphoto.jpg") else {
            application.log("HARNESS_MEDIA_URL is not set")
            completionHandler(.failed)
            return
        }
        downloader(application).start(url: url)
        if completesFetchAtOnce {
            completionHandler(.newData)
        } else if !bugs.contains(.neverCallsCompletionHandler) {
            silentRemoteNotificationCompletionHandler = completionHandler
        }
    }

    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @MainActor () -> Void
    ) {
        application.log("handleEventsForBackgroundURLSession \(identifier)")
        if !bugs.contains(.neverCallsEventsHandler) {
            backgroundSessionCompletionHandlers[identifier] = completionHandler
        }
        (identifier == BackgroundDownloader.videoSession ? videoDownloader(application) : downloader(application))
            .recreateSession()
    }

    /// The video screen's buttons: Download, then Play (the local file once downloaded).
    func application(_ application: Application, didTapButton button: String) {
        let videos = videoDownloader(application)
        guard let base = environment["HARNESS_MEDIA_URL"], let url = URL(string: base + "/videos/discovery.mp4") else {
            application.log("HARNESS_MEDIA_URL is not set")
            return
        }
        switch button {
        case "Download":
            videos.start(url: url)
            application.showUI(screen: "videos", title: "NASA TV", button: "Downloading")
        case "Play":
            let local =
                FileManager.default.fileExists(atPath: videos.destination.path) && !bugs.contains(.playsRemoteURL)
            application.showUI(
                screen: "player", title: "NASA TV",
                playbackURL: local ? videos.destination.absoluteString : url.absoluteString)
        default:
            application.log("no button '\(button)' on this screen")
        }
    }

    private func videoDownloader(_ application: Application, recreatingSession: Bool = true) -> BackgroundDownloader {
        if let videoDownloader { return videoDownloader }
        let downloader = BackgroundDownloader(
            application: application, bugs: bugs, session: BackgroundDownloader.videoSession,
            folder: "com.razeware.videos",
            fileName: "discovery.mp4", creatingSession: recreatingSession)
        downloader.onComplete = { error in
            if let error {
                application.log("video download failed: \(Self.describe(error))")
                application.showUI(screen: "videos", title: "NASA TV", button: "Download")
            } else {
                application.showUI(screen: "videos", title: "NASA TV", button: "Downloaded")
            }
        }
        downloader.onEventsFinished = { [weak self] in
            self?.backgroundSessionCompletionHandlers.removeValue(forKey: BackgroundDownloader.videoSession)?()
        }
        videoDownloader = downloader
        return downloader
    }

    private func downloader(_ application: Application) -> BackgroundDownloader {
        if let photoDownloader { return photoDownloader }
        let downloader = BackgroundDownloader(
            application: application, bugs: bugs, session: BackgroundDownloader.photoSession,
            folder: "com.razeware.photos",
            fileName: "dailyphoto.jpg")
        downloader.onComplete = { [weak self] error in self?.photoDownloadDidComplete(application, error: error) }
        downloader.onEventsFinished = { [weak self] in
            // As Apple asks: call the stored handler on the main thread once the events are in.
            self?.backgroundSessionCompletionHandlers.removeValue(forKey: BackgroundDownloader.photoSession)?()
        }
        photoDownloader = downloader
        return downloader
    }

    private func photoDownloadDidComplete(_ application: Application, error: (any Error)?) {
        let completionHandler = silentRemoteNotificationCompletionHandler
        silentRemoteNotificationCompletionHandler = nil
        if let error {
            application.log("photo download failed: \(Self.describe(error))")
            completionHandler?(.failed)
            return
        }
        application.showUI(screen: "photo", title: photoTitle ?? Self.defaultPhotoTitle)
        postLocalNotification(application)
        completionHandler?(.newData)
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? TaskError else { return "\(error)" }
        let reason = error.backgroundTaskCancelledReason.map { ", cancelled reason \($0)" } ?? ""
        return "error \(error.code)\(reason): \(error.localizedDescription)"
    }

    private func postLocalNotification(_ application: Application) {
        if usesUserNotifications {
            var content = NotificationContent()
            content.title = "NASA TV"
            content.body = "Astronomy Picture of the Day Available"
            content.badge = application.applicationIconBadgeNumber + 1
            UserNotificationCenter.current().add(NotificationRequest(identifier: "daily-photo", content: content))
            return
        }
        var notification = LocalNotification()
        notification.alertBody = "Astronomy Picture of the Day Available"
        notification.applicationIconBadgeNumber = application.applicationIconBadgeNumber + 1
        application.presentLocalNotificationNow(notification)
    }

    // UserNotificationCenterDelegate

    /// On screen, the photo's notification shows as a banner with its sound.
    func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: DeliveredNotification,
        withCompletionHandler completionHandler: @escaping @MainActor (PresentationOption) -> Void
    ) {
        completionHandler(bugs.contains(.noBanner) ? [] : [.banner, .sound])
    }

    func userNotificationCenter(
        _ center: UserNotificationCenter, didReceive notification: DeliveredNotification, actionIdentifier: String,
        withCompletionHandler completionHandler: @escaping @MainActor () -> Void
    ) {
        let application = Application.shared!
        guard !bugs.contains(.ignoresNotificationTap) else { return completionHandler() }
        application.log("notification tapped: \(notification.body ?? "")")
        // The tutorial's regular push: the tap opens the photo screen, which downloads the photo.
        photoTitle = bugs.contains(.ignoresPhotoTitle) ? nil : notification.userInfo["photoTitle"]?.stringValue
        application.showUI(screen: "photo", title: photoTitle ?? Self.defaultPhotoTitle, button: "Downloading")
        if let base = environment["HARNESS_MEDIA_URL"], let url = URL(string: base + "/photos/dailyphoto.jpg") {
            downloader(application).start(url: url)
        }
        completionHandler()
    }
}

/// A background task's identifier, set once `beginBackgroundTask` returns and read by its expiration
/// handler, which may run on another thread.
private final class BackgroundTaskIdentifier: Sendable {
    private let stored = Mutex(0)

    var value: Int {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
