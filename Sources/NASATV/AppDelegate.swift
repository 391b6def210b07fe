import DeviceClient
import Foundation

@MainActor
final class AppDelegate: ApplicationDelegate {
    enum Bug: String {
        case neverCallsCompletionHandler = "never-calls-completion-handler"
    }

    let bugs: Set<Bug>
    let environment = ProcessInfo.processInfo.environment
    /// The tutorial keeps the silent push's handler on the app delegate until the photo is in.
    var silentRemoteNotificationCompletionHandler: (@MainActor (BackgroundFetchResult) -> Void)?
    var photoDownloader: PhotoDownloader?

    init(bugs: Set<Bug>) { self.bugs = bugs }

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool {
        application.log("launched (\(launchOptions.reason))")
        application.registerForRemoteNotifications()
        return true
    }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        let installation = ParseInstallation(
            environment: environment, container: application.container, deviceToken: deviceToken.hexString,
            appIdentifier: application.bundleIdentifier)
        Task {
            do {
                try await installation.save()
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
        if !bugs.contains(.neverCallsCompletionHandler) {
            silentRemoteNotificationCompletionHandler = completionHandler
        }
        guard let base = environment["HARNESS_MEDIA_URL"], let url = URL(string: base + "/photos/dailyphoto.jpg") else {
            application.log("HARNESS_MEDIA_URL is not set")
            completionHandler(.failed)
            return
        }
        let downloader = PhotoDownloader(application: application) { [weak self] error in
            self?.photoDownloadDidComplete(application, error: error)
        }
        photoDownloader = downloader
        downloader.start(url: url)
    }

    private func photoDownloadDidComplete(_ application: Application, error: (any Error)?) {
        let completionHandler = silentRemoteNotificationCompletionHandler
        if let error {
            application.log("Error: \(error)")
            completionHandler?(.failed)
        } else if let completionHandler {
            postLocalNotification(application)
            completionHandler(.newData)
        }
        silentRemoteNotificationCompletionHandler = nil
    }

    private func postLocalNotification(_ application: Application) {
        var notification = LocalNotification()
        notification.alertBody = "Astronomy Picture of the Day Available"
        notification.applicationIconBadgeNumber = application.applicationIconBadgeNumber + 1
        application.presentLocalNotificationNow(notification)
    }
}
