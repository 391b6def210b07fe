import DeviceProtocol
import Foundation

/// What the device knows about one installed app during a run.
struct AppRecord {
    let app: InstalledApp
    let container: AppContainer
    var state: AppState = .notRunning(.neverLaunched)
    var process: AppProcess?
    var connection: AppConnection?
    var deviceToken: String?
    var badge = 0
    /// The cause to record when the process we are killing exits.
    var killCause: NotRunningCause?
    /// The push to hand over in the launch options of a background launch.
    var launchPush: RemoteNotificationParams?
    /// Pushes that arrived while the app was launching.
    var heldPushes: [RemoteNotificationParams] = []
    /// Fetch completion handlers the app still owes, with their watchdogs (nil in the foreground).
    var outstandingCompletions: [Int: Task<Void, Never>?] = [:]
    var suspendTask: Task<Void, Never>?
    /// Waits for the app's `hello` after a launch.
    var launchWaiter: CheckedContinuation<Void, any Error>?
    /// Transfer events that came while the app was not connected, delivered when it is.
    var heldTransferEvents: [RPCMessage] = []

    init(app: InstalledApp, container: AppContainer) {
        self.app = app
        self.container = container
    }
}
