import Foundation

/// Typed parameters and results of device protocol v1. Field names are the wire names.

public struct HelloParams: Codable, Sendable {
    public var protocolVersion: Int
    public var bundleId: String
    public var pid: Int32

    public init(protocolVersion: Int = DeviceMethod.protocolVersion, bundleId: String, pid: Int32) {
        self.protocolVersion = protocolVersion
        self.bundleId = bundleId
        self.pid = pid
    }
}

/// Where an app's sandbox lives on the host: iOS's `NSHomeDirectory()` and its standard folders.
public struct ContainerPaths: Codable, Sendable, Equatable {
    public var home: String
    public var caches: String
    public var documents: String
    public var tmp: String

    public init(home: String, caches: String, documents: String, tmp: String) {
        self.home = home
        self.caches = caches
        self.documents = documents
        self.tmp = tmp
    }
}

public struct HelloResult: Codable, Sendable {
    public var protocolVersion: Int
    /// `user`, `remote-notification`, `background-url-session` or `background-fetch`.
    public var launchReason: String
    /// `active` or `background`.
    public var applicationState: String
    public var container: ContainerPaths
    public var badge: Int
    /// For a `remote-notification` launch: the push that caused it (iOS's launch options).
    public var remoteNotification: RemoteNotificationParams?
    /// How long, in real seconds, a background wake for a push lasts before iOS kills an app that has
    /// not called the completion handler (30 s at `timeScale` 1): an app need not hard-code it.
    public var backgroundPushSeconds: Double?
    /// How fast the device's policy clock runs against the real one (1; 0.1 makes every policy time
    /// ten times shorter).
    public var timeScale: Double?

    public init(
        protocolVersion: Int, launchReason: String, applicationState: String, container: ContainerPaths,
        badge: Int, remoteNotification: RemoteNotificationParams?, backgroundPushSeconds: Double? = nil,
        timeScale: Double? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.launchReason = launchReason
        self.applicationState = applicationState
        self.container = container
        self.badge = badge
        self.remoteNotification = remoteNotification
        self.backgroundPushSeconds = backgroundPushSeconds
        self.timeScale = timeScale
    }
}

public struct RegisterResult: Codable, Sendable {
    public var deviceToken: String
    public init(deviceToken: String) { self.deviceToken = deviceToken }
}

public struct RemoteNotificationParams: Codable, Sendable, Equatable {
    /// Identifies the fetch completion handler the app must call (`fetchCompletion`).
    public var completionId: Int
    public var userInfo: [String: JSONValue]

    public init(completionId: Int, userInfo: [String: JSONValue]) {
        self.completionId = completionId
        self.userInfo = userInfo
    }
}

public struct FetchCompletionParams: Codable, Sendable {
    public var completionId: Int
    /// `newData`, `noData` or `failed`, as `UIBackgroundFetchResult`.
    public var result: String

    public init(completionId: Int, result: String) {
        self.completionId = completionId
        self.result = result
    }
}

/// `setMinimumBackgroundFetchInterval`: `seconds` nil is `UIApplicationBackgroundFetchIntervalNever`,
/// 0 is `UIApplicationBackgroundFetchIntervalMinimum`.
public struct BackgroundFetchIntervalParams: Codable, Sendable, Equatable {
    public var seconds: Double?
    public init(seconds: Double?) { self.seconds = seconds }
}

/// `performFetch`: call `fetchCompletion` with this id.
public struct PerformFetchParams: Codable, Sendable, Equatable {
    public var completionId: Int
    public init(completionId: Int) { self.completionId = completionId }
}

/// `backgroundTask.begin` (with `name`), `backgroundTask.end` and `backgroundTaskExpired`.
public struct BackgroundTaskParams: Codable, Sendable, Equatable {
    public var identifier: Int
    public var name: String?
    public init(identifier: Int, name: String? = nil) {
        self.identifier = identifier
        self.name = name
    }
}

/// `ui.state`: what the app's screen shows; every field optional.
public struct UIStateParams: Codable, Sendable, Equatable {
    public var screen: String?
    public var title: String?
    public var button: String?
    public var playbackURL: String?

    public init(screen: String? = nil, title: String? = nil, button: String? = nil, playbackURL: String? = nil) {
        self.screen = screen
        self.title = title
        self.button = button
        self.playbackURL = playbackURL
    }
}

/// `ui.tap`: the button the user tapped, by its label.
public struct UITapParams: Codable, Sendable, Equatable {
    public var button: String
    public init(button: String) { self.button = button }
}

/// `ui.type`: the field the user typed into, by its name, and the text it now holds.
public struct UITypeParams: Codable, Sendable, Equatable {
    public var field: String
    public var text: String
    public init(field: String, text: String) {
        self.field = field
        self.text = text
    }
}

public struct LogParams: Codable, Sendable {
    public var message: String
    public init(message: String) { self.message = message }
}

/// The empty result and the empty parameter list.
public struct Empty: Codable, Sendable {
    public init() {}
}
