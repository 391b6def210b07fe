import DeviceProtocol
import Foundation

/// `URLSessionConfiguration` for apps under test: only what decides where a task runs.
public struct DeviceURLSessionConfiguration: Sendable {
    public var identifier: String
    /// True for `background(withIdentifier:)`: the device's TransferDaemon runs the tasks, and they
    /// outlive the app.
    public var isBackground: Bool
    /// Let the system wait for good conditions (Wi-Fi). Tasks of a background session created while the
    /// app is in the background are discretionary anyway.
    public var isDiscretionary = false
    /// Whether tasks may use a cellular network.
    public var allowsCellularAccess = true

    /// `URLSessionConfiguration.background(withIdentifier:)`.
    public static func background(withIdentifier identifier: String) -> DeviceURLSessionConfiguration {
        DeviceURLSessionConfiguration(identifier: identifier, isBackground: true)
    }

    /// `URLSessionConfiguration.default`: tasks end when the app dies.
    public static var `default`: DeviceURLSessionConfiguration {
        DeviceURLSessionConfiguration(identifier: "default-\(UUID().uuidString)", isBackground: false)
    }
}

/// `URLSessionDownloadDelegate`, with Apple's method names.
@MainActor
public protocol DeviceURLSessionDownloadDelegate: AnyObject {
    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
    /// Move the file now: the device deletes it as soon as this returns.
    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didFinishDownloadingTo location: URL)
    func urlSession(_ session: DeviceURLSession, task: DeviceURLSessionDownloadTask, didCompleteWithError error: (any Error)?)
    /// Every event that waited for a background session has been delivered: call the handler kept
    /// from `handleEventsForBackgroundURLSession` now.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession)
}

extension DeviceURLSessionDownloadDelegate {
    public func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}
    public func urlSession(
        _ session: DeviceURLSession, task: DeviceURLSessionDownloadTask, didCompleteWithError error: (any Error)?
    ) {}
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession) {}
}

/// `URLSession` for apps under test. Creating one with a background identifier the device already
/// knows reconnects to that session's tasks, as on iOS.
@MainActor
public final class DeviceURLSession {
    public let configuration: DeviceURLSessionConfiguration
    public weak var delegate: (any DeviceURLSessionDownloadDelegate)?
    private var tasks: [Int: DeviceURLSessionDownloadTask] = [:]
    private var nextTaskIdentifier = 1

    public init(configuration: DeviceURLSessionConfiguration, delegate: (any DeviceURLSessionDownloadDelegate)?) {
        self.configuration = configuration
        self.delegate = delegate
        let application = Application.shared!
        application.sessions[configuration.identifier] = self
        application.send(
            DeviceMethod.sessionCreate,
            SessionCreateParams(
                identifier: configuration.identifier, background: configuration.isBackground,
                discretionary: configuration.isDiscretionary, allowsCellularAccess: configuration.allowsCellularAccess))
    }

    /// `downloadTask(with:)`: the task starts when resumed.
    public func downloadTask(with url: URL) -> DeviceURLSessionDownloadTask {
        defer { nextTaskIdentifier += 1 }
        let task = DeviceURLSessionDownloadTask(session: self, taskIdentifier: nextTaskIdentifier, url: url)
        tasks[task.taskIdentifier] = task
        return task
    }

    func resume(_ task: DeviceURLSessionDownloadTask) {
        Application.shared.send(
            DeviceMethod.downloadTaskResume,
            DownloadTaskParams(
                session: configuration.identifier, taskIdentifier: task.taskIdentifier, url: task.url.absoluteString))
    }

    private func task(_ identifier: Int, url: String? = nil) -> DeviceURLSessionDownloadTask {
        if let task = tasks[identifier] { return task }
        // A task from an earlier launch of the app, reported after a relaunch.
        let task = DeviceURLSessionDownloadTask(
            session: self, taskIdentifier: identifier, url: URL(string: url ?? "about:blank")!)
        tasks[identifier] = task
        return task
    }

    func didWriteData(_ params: DidWriteDataParams) {
        let task = task(params.taskIdentifier)
        task.countOfBytesReceived = params.totalBytesWritten
        task.countOfBytesExpectedToReceive = params.totalBytesExpectedToWrite
        delegate?.urlSession(
            self, downloadTask: task, didWriteData: params.bytesWritten, totalBytesWritten: params.totalBytesWritten,
            totalBytesExpectedToWrite: params.totalBytesExpectedToWrite)
    }

    func didFinishDownloading(_ params: DidFinishDownloadingParams) {
        delegate?.urlSession(
            self, downloadTask: task(params.taskIdentifier), didFinishDownloadingTo: URL(fileURLWithPath: params.location))
    }

    func didFinishEvents() {
        delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: self)
    }

    func didComplete(_ params: DidCompleteParams) {
        let task = task(params.taskIdentifier)
        delegate?.urlSession(self, task: task, didCompleteWithError: params.error)
        tasks[params.taskIdentifier] = nil
    }
}

/// `URLSessionDownloadTask`.
@MainActor
public final class DeviceURLSessionDownloadTask {
    public let taskIdentifier: Int
    public let url: URL
    public private(set) weak var session: DeviceURLSession?
    public fileprivate(set) var countOfBytesReceived: Int64 = 0
    public fileprivate(set) var countOfBytesExpectedToReceive: Int64 = -1

    init(session: DeviceURLSession, taskIdentifier: Int, url: URL) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.url = url
    }

    public func resume() { session?.resume(self) }
}
