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
    /// `httpMaximumConnectionsPerHost`: tasks of the session talking to one host at a time (iOS: 4).
    public var httpMaximumConnectionsPerHost = 4

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
    func urlSession(
        _ session: DeviceURLSession, task: DeviceURLSessionDownloadTask, didCompleteWithError error: (any Error)?)
    /// Every event that waited for a background session has been delivered: call the handler kept
    /// from `handleEventsForBackgroundURLSession` now.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: DeviceURLSession)
    /// A task made with `downloadTask(withResumeData:)` went on from `fileOffset`.
    func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64)
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
    public func urlSession(
        _ session: DeviceURLSession, downloadTask: DeviceURLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {}
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
                discretionary: configuration.isDiscretionary, allowsCellularAccess: configuration.allowsCellularAccess,
                httpMaximumConnectionsPerHost: configuration.httpMaximumConnectionsPerHost))
    }

    /// `downloadTask(with:)`: the task starts when resumed.
    public func downloadTask(with url: URL) -> DeviceURLSessionDownloadTask {
        defer { nextTaskIdentifier += 1 }
        let task = DeviceURLSessionDownloadTask(session: self, taskIdentifier: nextTaskIdentifier, url: url)
        tasks[task.taskIdentifier] = task
        return task
    }

    /// `downloadTask(withResumeData:)`: goes on from where a cancelled or failed task stopped. Nil when
    /// the data is not resume data this device gave.
    public func downloadTask(withResumeData resumeData: Data) -> DeviceURLSessionDownloadTask? {
        let encoded = String(decoding: resumeData, as: UTF8.self)
        guard let data = ResumeData(encoded: encoded), let url = URL(string: data.url) else { return nil }
        defer { nextTaskIdentifier += 1 }
        let task = DeviceURLSessionDownloadTask(session: self, taskIdentifier: nextTaskIdentifier, url: url)
        task.resumeData = encoded
        tasks[task.taskIdentifier] = task
        return task
    }

    func resume(_ task: DeviceURLSessionDownloadTask) {
        Application.shared.send(
            DeviceMethod.downloadTaskResume,
            DownloadTaskParams(
                session: configuration.identifier, taskIdentifier: task.taskIdentifier, url: task.url.absoluteString,
                resumeData: task.resumeData, taskDescription: task.taskDescription))
    }

    func cancel(
        _ task: DeviceURLSessionDownloadTask, producingResumeData: Bool, then: @escaping @MainActor (Data?) -> Void
    ) {
        let connection = Application.shared.connection
        let params = CancelTaskParams(
            session: configuration.identifier, taskIdentifier: task.taskIdentifier,
            produceResumeData: producingResumeData)
        Task { @MainActor in
            let answer = try? await connection.call(DeviceMethod.downloadTaskCancel, params).decode(
                CancelTaskResult.self)
            then(answer?.resumeData.map { Data($0.utf8) })
        }
    }

    func didResume(_ params: DidResumeParams) {
        delegate?.urlSession(
            self, downloadTask: task(params.taskIdentifier), didResumeAtOffset: params.fileOffset,
            expectedTotalBytes: params.expectedTotalBytes)
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
            self, downloadTask: task(params.taskIdentifier),
            didFinishDownloadingTo: URL(fileURLWithPath: params.location))
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
    /// The resume data the task was made from.
    fileprivate var resumeData: String?
    /// `taskDescription`: the app's own label, set before `resume()`.
    public var taskDescription: String?

    init(session: DeviceURLSession, taskIdentifier: Int, url: URL) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.url = url
    }

    public func resume() { session?.resume(self) }

    /// `cancel()`: the task ends with -999.
    public func cancel() { session?.cancel(self, producingResumeData: false) { _ in } }

    /// `cancel(byProducingResumeData:)`: the task ends with -999, and `completionHandler` gets resume
    /// data when the download can go on later (the server gave ranges and an ETag or Last-Modified).
    public func cancel(byProducingResumeData completionHandler: @escaping @MainActor (Data?) -> Void) {
        session?.cancel(self, producingResumeData: true, then: completionHandler)
    }
}

extension TaskError {
    /// `URLError.downloadTaskResumeData`.
    public var downloadTaskResumeData: Data? { resumeData.map { Data($0.utf8) } }
}
