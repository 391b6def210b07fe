import Foundation
import Recording

/// How the simulated device behaves. Defaults follow iOS where Apple documents a number.
public struct DeviceConfiguration: Sendable {
    /// Where app containers live.
    public var dataDirectory: URL
    /// The Unix socket apps connect to (`HARNESS_DEVICE_SOCKET`).
    public var socketPath: String
    /// How long a woken app may run before it must call its completion handler. iOS: 30 s.
    public var backgroundPushBudget: Duration = .seconds(30)
    /// How long a background task (`beginBackgroundTask`) keeps an app running in the background. iOS: about 30 s.
    public var backgroundTimeAllowance: Duration = .seconds(30)
    /// How long an app keeps running after Home before it is suspended. iOS: a few seconds.
    public var suspendAfterBackground: Duration = .seconds(2)
    /// How long a launched app has to connect to the device socket.
    public var launchTimeout: Duration = .seconds(20)
    /// Timeouts and retries of background transfers (nsurlsessiond).
    public var transfers = TransferPolicy()
    /// The settings and budget that may hold background pushes (permissive by default).
    public var pushPolicy = PushPolicy()
    /// The first delay of nsurlsessiond's resume rate limiter (docs/ios-rules.md U9); 0 turns it off.
    public var sessionLaunchDelay: Duration = .seconds(60)
    /// After a reboot, how long launches for background pushes are deferred (dasd's ThunderingHerdPolicy,
    /// docs/ios-rules.md P12: about 300 s observed).
    public var bootLaunchDelay: Duration = .seconds(300)
    /// Real seconds per policy second for every policy timer (``PolicyClock``); 1 is real time.
    public var timeScale: Double = 1
    /// Extra environment for every app (service URLs, keys).
    public var environment: [String: String] = [:]
    /// Records each app's device-protocol lines into this cassette (`transcripts/<bundle id>.jsonl`).
    public var recorder: CassetteRecorder?
    /// The device's name in a scenario with named devices: its transcripts are then
    /// `transcripts/<bundle id>@<name>.jsonl`, so the same app on two devices has two.
    public var recordedName: String?

    public init(dataDirectory: URL, socketPath: String) {
        self.dataDirectory = dataDirectory
        self.socketPath = socketPath
    }
}

/// An app installed on the device.
public struct InstalledApp: Sendable {
    public var bundleId: String
    /// Executable and arguments; a relative executable path is resolved against `workingDirectory`.
    public var command: [String]
    public var workingDirectory: URL
    /// `UIBackgroundModes`, e.g. `remote-notification`, `fetch`.
    public var backgroundModes: Set<String>
    public var environment: [String: String]

    public init(
        bundleId: String, command: [String], workingDirectory: URL, backgroundModes: Set<String>,
        environment: [String: String] = [:]
    ) {
        self.bundleId = bundleId
        self.command = command
        self.workingDirectory = workingDirectory
        self.backgroundModes = backgroundModes
        self.environment = environment
    }
}
