import Foundation

// The messages of background URL sessions: sessions, download tasks and their delegate events.

public struct SessionCreateParams: Codable, Sendable {
    public var identifier: String
    /// A session made with `URLSessionConfiguration.background(withIdentifier:)`; a default session's
    /// tasks die with the app.
    public var background: Bool
    /// `isDiscretionary`: wait for good conditions (Wi-Fi). Tasks a background session creates while
    /// the app is in the background are discretionary whatever this says. Default false.
    public var discretionary: Bool?
    /// `allowsCellularAccess`. Default true.
    public var allowsCellularAccess: Bool?
    /// `HTTPMaximumConnectionsPerHost`: the session's tasks to one host at a time. Default 4 (iOS's).
    public var httpMaximumConnectionsPerHost: Int?

    public init(
        identifier: String, background: Bool, discretionary: Bool? = nil, allowsCellularAccess: Bool? = nil,
        httpMaximumConnectionsPerHost: Int? = nil
    ) {
        self.identifier = identifier
        self.background = background
        self.discretionary = discretionary
        self.allowsCellularAccess = allowsCellularAccess
        self.httpMaximumConnectionsPerHost = httpMaximumConnectionsPerHost
    }
}

public struct DownloadTaskParams: Codable, Sendable {
    public var session: String
    public var taskIdentifier: Int
    public var url: String
    /// `downloadTask(withResumeData:)`: the opaque string a cancellation or failure gave; `url` is then
    /// the one it names.
    public var resumeData: String?
    /// `taskDescription`, the app's own label for the task.
    public var taskDescription: String?

    public init(
        session: String, taskIdentifier: Int, url: String, resumeData: String? = nil, taskDescription: String? = nil
    ) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.url = url
        self.resumeData = resumeData
        self.taskDescription = taskDescription
    }
}

/// `downloadTask.cancel`: `cancel()` or `cancel(byProducingResumeData:)`.
public struct CancelTaskParams: Codable, Sendable {
    public var session: String
    public var taskIdentifier: Int
    public var produceResumeData: Bool

    public init(session: String, taskIdentifier: Int, produceResumeData: Bool) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.produceResumeData = produceResumeData
    }
}

/// The answer to `downloadTask.cancel`: resume data when the download can go on later (docs/ios-rules.md U11).
public struct CancelTaskResult: Codable, Sendable {
    public var resumeData: String?
    public init(resumeData: String?) { self.resumeData = resumeData }
}

/// `urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)`.
public struct DidResumeParams: Codable, Sendable, Equatable {
    public var session: String
    public var taskIdentifier: Int
    public var fileOffset: Int64
    public var expectedTotalBytes: Int64

    public init(session: String, taskIdentifier: Int, fileOffset: Int64, expectedTotalBytes: Int64) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.fileOffset = fileOffset
        self.expectedTotalBytes = expectedTotalBytes
    }
}

/// What resume data holds (`NSURLSessionDownloadTaskResumeData`): the partial file and what a resume
/// needs. Apps treat the encoded string as opaque.
public struct ResumeData: Codable, Sendable, Equatable {
    public var url: String
    /// The partial file, kept in the app's `tmp/`.
    public var file: String
    public var bytes: Int64
    public var expectedBytes: Int64
    /// What `If-Range` carries: the strong ETag or the Last-Modified date.
    public var validator: String

    public init(url: String, file: String, bytes: Int64, expectedBytes: Int64, validator: String) {
        self.url = url
        self.file = file
        self.bytes = bytes
        self.expectedBytes = expectedBytes
        self.validator = validator
    }

    /// Base64 of the JSON, as the protocol carries it.
    public var encoded: String {
        ((try? JSONEncoder().encode(self)) ?? Data()).base64EncodedString()
    }

    public init?(encoded: String) {
        guard let data = Data(base64Encoded: encoded), let value = try? JSONDecoder().decode(Self.self, from: data)
        else {
            return nil
        }
        self = value
    }
}

public struct DidWriteDataParams: Codable, Sendable {
    public var session: String
    public var taskIdentifier: Int
    public var bytesWritten: Int64
    public var totalBytesWritten: Int64
    /// -1 when the server sent no `Content-Length` (`NSURLSessionTransferSizeUnknown`).
    public var totalBytesExpectedToWrite: Int64

    public init(
        session: String, taskIdentifier: Int, bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.bytesWritten = bytesWritten
        self.totalBytesWritten = totalBytesWritten
        self.totalBytesExpectedToWrite = totalBytesExpectedToWrite
    }
}

public struct DidFinishDownloadingParams: Codable, Sendable {
    public var session: String
    public var taskIdentifier: Int
    /// The temporary file in the app's `tmp/`; deleted as soon as the app answers.
    public var location: String
    /// The HTTP status of the response the file holds (`downloadTask.response.statusCode`): a download
    /// task finishes even for a 404, with the error page as the file.
    public var statusCode: Int?

    public init(session: String, taskIdentifier: Int, location: String, statusCode: Int? = nil) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.location = location
        self.statusCode = statusCode
    }
}

public struct DidCompleteParams: Codable, Sendable {
    public var session: String
    public var taskIdentifier: Int
    /// nil on success.
    public var error: TaskError?

    public init(session: String, taskIdentifier: Int, error: TaskError?) {
        self.session = session
        self.taskIdentifier = taskIdentifier
        self.error = error
    }
}

/// An `NSError` in `NSURLErrorDomain` terms.
public struct TaskError: Codable, Sendable, Equatable, Error {
    public var code: Int
    public var localizedDescription: String
    /// `NSURLErrorBackgroundTaskCancelledReasonKey` of a cancelled (-999) background task: 0 the user
    /// force-quit the app, 1 Background App Refresh is off, 2 insufficient system resources.
    public var backgroundTaskCancelledReason: Int?
    /// `NSURLSessionDownloadTaskResumeData`: present only when the download can be resumed (docs/ios-rules.md U11).
    public var resumeData: String?

    public init(
        code: Int, localizedDescription: String, backgroundTaskCancelledReason: Int? = nil, resumeData: String? = nil
    ) {
        self.code = code
        self.localizedDescription = localizedDescription
        self.backgroundTaskCancelledReason = backgroundTaskCancelledReason
        self.resumeData = resumeData
    }
}

/// `handleEventsForBackgroundURLSession`: the session whose events wait, and the completion handler
/// the app must call (`backgroundEventsCompletion`) once `urlSessionDidFinishEvents` has come.
public struct HandleEventsParams: Codable, Sendable, Equatable {
    public var identifier: String
    public var completionId: Int

    public init(identifier: String, completionId: Int) {
        self.identifier = identifier
        self.completionId = completionId
    }
}

/// `urlSessionDidFinishEvents(forBackgroundURLSession:)`.
public struct SessionEventsFinishedParams: Codable, Sendable, Equatable {
    public var session: String
    public init(session: String) { self.session = session }
}

/// `backgroundEventsCompletion`: the app called the handler of `handleEventsForBackgroundURLSession`.
public struct BackgroundEventsCompletionParams: Codable, Sendable, Equatable {
    public var completionId: Int
    public init(completionId: Int) { self.completionId = completionId }
}
