import DeviceProtocol
import Foundation

/// `UIApplicationDelegate`'s shape, for apps under test. Every method has a default that does nothing,
/// so an app implements only what it uses, as with UIKit.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions) -> Bool
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
    func application(
        _ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error)
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
        fetchCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void)
    /// A background session's events are waiting: recreate the session with this identifier (its
    /// delegate receives them), keep the handler, and call it from `urlSessionDidFinishEvents`.
    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @MainActor () -> Void)
    /// Background fetch: fetch new content and call the handler within 30 s.
    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void)
    func applicationDidEnterBackground(_ application: Application)
    func applicationWillEnterForeground(_ application: Application)
    func applicationWillResignActive(_ application: Application)
    func applicationDidBecomeActive(_ application: Application)
    /// The user tapped a button on screen (the harness's stand-in for the app's UI), by its label.
    func application(_ application: Application, didTapButton button: String)
    /// The user typed into a field on screen: `text` is all it holds now.
    func application(_ application: Application, didType text: String, into field: String)
}

extension ApplicationDelegate {
    public func application(
        _ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions
    ) -> Bool { true }
    public func application(
        _ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {}
    public func application(
        _ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error
    ) {}
    public func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: JSONValue],
        fetchCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
    ) {
        completionHandler(.noData)
    }
    /// Does nothing, like an app delegate without the method: the device then reports the handler as
    /// never called.
    public func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @MainActor () -> Void
    ) {}
    public func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @MainActor (BackgroundFetchResult) -> Void
    ) {
        completionHandler(.noData)
    }
    public func applicationDidEnterBackground(_ application: Application) {}
    public func applicationWillEnterForeground(_ application: Application) {}
    public func applicationWillResignActive(_ application: Application) {}
    public func applicationDidBecomeActive(_ application: Application) {}
    public func application(_ application: Application, didTapButton button: String) {}
    public func application(_ application: Application, didType text: String, into field: String) {}
}

/// `UIApplication.LaunchOptionsKey`'s useful part: why the app was launched.
public struct LaunchOptions: Sendable {
    /// `user`, `remote-notification`, `background-url-session` or `background-fetch`.
    public var reason: String
    /// The push that launched the app, for a `remote-notification` launch.
    public var remoteNotification: [String: JSONValue]?
}

/// `UIBackgroundFetchResult`.
public enum BackgroundFetchResult: String, Sendable {
    case newData
    case noData
    case failed
}

/// `UIApplication.State`.
public enum ApplicationState: String, Sendable {
    case active
    case inactive
    case background
}
