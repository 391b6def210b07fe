import Processes

/// What the device refused or could not do, worded for the user by ``description``.
public enum DeviceError: Error, CustomStringConvertible {
    /// ``DeviceSimulator/serve()`` before ``DeviceSimulator/bind()``.
    case socketNotBound
    /// `setNetwork` with a network other than wifi, cellular or offline.
    case unknownNetwork(String)
    /// No app with the bundle id is installed.
    case notInstalled(String)
    /// SpringBoard's state machine does not allow it for the app now.
    case notAllowed(bundleId: String, LifecycleError)
    /// The device is locked; `action` is what the user wanted to do.
    case locked(action: String)
    /// A launch asked for while the device shuts down.
    case shuttingDown(bundleId: String)
    /// The app's process could not be started.
    case cannotStart(bundleId: String, AppProcess.LaunchError)
    /// A launch that did not end connected: `what` happened; `output` is the app's last lines.
    case launchFailed(bundleId: String, what: String, output: [String])
    /// An app to end that has no process.
    case noProcess(bundleId: String)
    /// The app did not answer a call in time.
    case noAnswer(method: String, within: Duration)
    /// A call to an app that is not connected, or that disconnected before it answered.
    case notConnected(disconnected: Bool)
    /// A tap on the app's notification, and it has none in Notification Center.
    case noNotification(bundleId: String)
    /// A tap or typing into an app that is not on screen (`state`).
    case notOnScreen(bundleId: String, state: String, typing: Bool)

    public var description: String {
        switch self {
        case .socketNotBound: "the device socket is not bound"
        case .unknownNetwork(let network): "network must be wifi, cellular or offline, not '\(network)'"
        case .notInstalled(let bundleId): "no app '\(bundleId)' is installed"
        case .notAllowed(let bundleId, let error): "\(bundleId): \(error)"
        case .locked(let action): "the device is locked: unlock it before you \(action)"
        case .shuttingDown(let bundleId): "\(bundleId) is not launched: the device is shutting down"
        case .cannotStart(_, let error): error.description
        case .launchFailed(let bundleId, let what, let output):
            "the app \(bundleId) \(what)"
                + (output.isEmpty
                    ? " (it printed nothing)"
                    : "; its last output:\n" + output.map { "    " + $0 }.joined(separator: "\n"))
        case .noProcess(let bundleId): "\(bundleId) has no process to end"
        case .noAnswer(let method, let timeout): "the app did not answer \(method) within \(timeout)"
        case .notConnected(let disconnected): disconnected ? "the app disconnected" : "the app is not connected"
        case .noNotification(let bundleId): "\(bundleId) has no notification in Notification Center to tap"
        case .notOnScreen(let bundleId, let state, let typing):
            "\(bundleId) is not on screen (\(state)): "
                + (typing ? "nothing can be typed into it" : "its buttons cannot be tapped")
        }
    }
}
