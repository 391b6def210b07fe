import DeviceProtocol
import Foundation

/// The app's view of its device: `UIApplication` for apps under test.
///
/// There is one per process, reached as ``shared`` once ``ApplicationMain(bundleIdentifier:delegate:)``
/// has connected to the device socket named by `HARNESS_DEVICE_SOCKET`.
@MainActor
public final class Application {
    public internal(set) static var shared: Application!
    /// Messages that arrived before the handshake finished.
    static var earlyMessages: [RPCMessage] = []

    public let bundleIdentifier: String
    public private(set) var applicationState: ApplicationState
    /// The badge on the app's icon, as the device last reported it.
    public var applicationIconBadgeNumber: Int
    /// The app's sandbox: `NSHomeDirectory()` and its standard folders.
    public let container: ContainerPaths
    public weak var delegate: (any ApplicationDelegate)?

    let connection: DeviceConnection
    var sessions: [String: DeviceURLSession] = [:]
    private var nextBackgroundTask = 0
    private var backgroundTaskExpirations: [Int: @MainActor () -> Void] = [:]
    /// `UNUserNotificationCenter.current()`.
    public private(set) lazy var notificationCenter = UserNotificationCenter(application: self)

    init(bundleIdentifier: String, connection: DeviceConnection, hello: HelloResult) {
        self.bundleIdentifier = bundleIdentifier
        self.connection = connection
        self.container = hello.container
        self.applicationIconBadgeNumber = hello.badge
        self.applicationState = hello.applicationState == "active" ? .active : .background
    }

    /// Asks the device for an APNs token; the answer arrives at the delegate, as on iOS.
    public func registerForRemoteNotifications() {
        Task {
            do {
                let result = try await connection.call(DeviceMethod.registerForRemoteNotifications, Empty())
                    .decode(RegisterResult.self)
                delegate?.application(
                    self, didRegisterForRemoteNotificationsWithDeviceToken: Data(hexString: result.deviceToken))
            } catch {
                delegate?.application(self, didFailToRegisterForRemoteNotificationsWithError: error)
            }
        }
    }

    /// `beginBackgroundTask(withName:expirationHandler:)`: keeps the app running in the background
    /// (about 30 s) until `endBackgroundTask(_:)`; `expirationHandler` runs when the time is up and must
    /// end the task, or the app is killed.
    public func beginBackgroundTask(
        withName name: String? = nil, expirationHandler: (@MainActor () -> Void)? = nil
    ) -> Int {
        nextBackgroundTask += 1
        backgroundTaskExpirations[nextBackgroundTask] = expirationHandler
        send(DeviceMethod.backgroundTaskBegin, BackgroundTaskParams(identifier: nextBackgroundTask, name: name))
        return nextBackgroundTask
    }

    /// `endBackgroundTask(_:)`.
    public func endBackgroundTask(_ identifier: Int) {
        backgroundTaskExpirations[identifier] = nil
        send(DeviceMethod.backgroundTaskEnd, BackgroundTaskParams(identifier: identifier))
    }

    /// `UIApplicationBackgroundFetchIntervalMinimum`: fetch as often as the system allows.
    public static let backgroundFetchIntervalMinimum: TimeInterval = 0
    /// `UIApplicationBackgroundFetchIntervalNever`, the default: no background fetch.
    public static let backgroundFetchIntervalNever: TimeInterval = .greatestFiniteMagnitude

    /// `setMinimumBackgroundFetchInterval(_:)`.
    public func setMinimumBackgroundFetchInterval(_ interval: TimeInterval) {
        let seconds = interval >= Self.backgroundFetchIntervalNever ? nil : interval
        send(DeviceMethod.setMinimumBackgroundFetchInterval, BackgroundFetchIntervalParams(seconds: seconds))
    }

    /// `presentLocalNotificationNow(_:)`: shows a notification at once and applies its badge number.
    public func presentLocalNotificationNow(_ notification: LocalNotification) {
        if let badge = notification.applicationIconBadgeNumber { applicationIconBadgeNumber = badge }
        send(DeviceMethod.localNotificationAdd, notification.parameters)
    }

    /// Reports what the screen shows now, for scenarios to check (`app.ui`): the screen's name, its
    /// title, a button's label, a player's URL.
    public func showUI(screen: String? = nil, title: String? = nil, button: String? = nil, playbackURL: String? = nil) {
        try? connection.notify(
            DeviceMethod.uiState, UIStateParams(screen: screen, title: title, button: button, playbackURL: playbackURL))
    }

    /// Writes a line into the run's timeline (the app's `NSLog`).
    public func log(_ message: String) {
        try? connection.notify(DeviceMethod.log, LogParams(message: message))
    }

    /// Sends a request now (requests keep their order) and logs a refusal when it comes.
    func send<P: Encodable>(_ method: String, _ params: P) {
        let connection = connection
        connection.send(method, params) { result in
            if case .failure(let error) = result {
                try? connection.notify(DeviceMethod.log, LogParams(message: "device refused \(method): \(error)"))
            }
        }
    }

    func handle(_ message: RPCMessage) {
        guard let method = message.method else { return }
        do {
            switch method {
            case DeviceMethod.applicationDidEnterBackground:
                applicationState = .background
                delegate?.applicationDidEnterBackground(self)
            case DeviceMethod.applicationWillEnterForeground:
                applicationState = .inactive
                delegate?.applicationWillEnterForeground(self)
            case DeviceMethod.applicationDidBecomeActive:
                applicationState = .active
                delegate?.applicationDidBecomeActive(self)
            case DeviceMethod.applicationWillResignActive:
                applicationState = .inactive
                delegate?.applicationWillResignActive(self)
            case DeviceMethod.didReceiveRemoteNotification:
                deliver(try message.decodeParams(RemoteNotificationParams.self))
            case DeviceMethod.willPresentNotification:
                let params = try message.decodeParams(NotificationParams.self)
                let connection = connection
                notificationCenter.willPresent(params) { options in
                    guard let id = message.id else { return }
                    try? connection.write(.response(id: id, PresentationOptions(options: options)))
                }
            case DeviceMethod.didReceiveNotificationResponse:
                notificationCenter.didReceive(try message.decodeParams(NotificationParams.self))
            case DeviceMethod.backgroundTaskExpired:
                let params = try message.decodeParams(BackgroundTaskParams.self)
                backgroundTaskExpirations.removeValue(forKey: params.identifier)?()
            case DeviceMethod.uiTap:
                delegate?.application(self, didTapButton: try message.decodeParams(UITapParams.self).button)
            case DeviceMethod.uiType:
                let params = try message.decodeParams(UITypeParams.self)
                delegate?.application(self, didType: params.text, into: params.field)
            case DeviceMethod.performFetch:
                performFetch(try message.decodeParams(PerformFetchParams.self))
            case DeviceMethod.didWriteData:
                let params = try message.decodeParams(DidWriteDataParams.self)
                sessions[params.session]?.didWriteData(params)
            case DeviceMethod.didResumeAtOffset:
                let params = try message.decodeParams(DidResumeParams.self)
                sessions[params.session]?.didResume(params)
            case DeviceMethod.didFinishDownloadingTo:
                let params = try message.decodeParams(DidFinishDownloadingParams.self)
                sessions[params.session]?.didFinishDownloading(params)
                if let id = message.id { try connection.write(.response(id: id, Empty())) }
            case DeviceMethod.didCompleteWithError:
                let params = try message.decodeParams(DidCompleteParams.self)
                sessions[params.session]?.didComplete(params)
            case DeviceMethod.handleEventsForBackgroundURLSession:
                handleEvents(try message.decodeParams(HandleEventsParams.self))
            case DeviceMethod.urlSessionDidFinishEvents:
                let params = try message.decodeParams(SessionEventsFinishedParams.self)
                sessions[params.session]?.didFinishEvents()
            default:
                if let id = message.id { try connection.write(.failure(id: id, .methodNotFound(method))) }
            }
        } catch {
            log("could not handle \(method): \(error)")
        }
    }

    private func handleEvents(_ params: HandleEventsParams) {
        var called = false
        delegate?.application(self, handleEventsForBackgroundURLSession: params.identifier) { [weak self] in
            guard let self, !called else { return }
            called = true
            self.send(
                DeviceMethod.backgroundEventsCompletion,
                BackgroundEventsCompletionParams(completionId: params.completionId))
        }
    }

    private func performFetch(_ params: PerformFetchParams) {
        var called = false
        delegate?.application(
            self,
            performFetchWithCompletionHandler: { [weak self] result in
                guard let self, !called else { return }
                called = true
                self.send(
                    DeviceMethod.fetchCompletion,
                    FetchCompletionParams(completionId: params.completionId, result: result.rawValue))
            })
    }

    func deliver(_ notification: RemoteNotificationParams) {
        let completionId = notification.completionId
        var called = false
        delegate?.application(self, didReceiveRemoteNotification: notification.userInfo) { [weak self] result in
            guard let self, !called else { return }
            called = true
            self.send(
                DeviceMethod.fetchCompletion, FetchCompletionParams(completionId: completionId, result: result.rawValue)
            )
        }
    }
}

extension Data {
    init(hexString: String) {
        var bytes = [UInt8]()
        var iterator = hexString.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { break }
            bytes.append(value)
        }
        self.init(bytes)
    }

    /// The token as APNs providers send it: lowercase hex.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
