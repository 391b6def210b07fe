import DeviceProtocol
import Foundation
import Processes

/// What the device knows about one installed app during a run.
struct AppRecord {
    let app: InstalledApp
    let container: AppContainer
    var state: AppState = .notRunning(.neverLaunched)
    var process: AppProcess?
    var connection: AppConnection?
    var deviceToken: String?
    /// The cause to record when the process we are killing exits.
    var killCause: NotRunningCause?
    /// A session's events arrived for the app while it was being killed: it is relaunched for them once
    /// its exit is reported.
    var relaunchForSessionsAfterExit = false
    /// Wait for the current process to end.
    var exitWaiters: [CheckedContinuation<Void, Never>] = []
    /// Waits for the app's `hello` after a launch.
    var launchWaiter: CheckedContinuation<Void, any Error>?
    init(app: InstalledApp, container: AppContainer) {
        self.app = app
        self.container = container
    }
}
