import AsyncHTTPClient
import Crypto
import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore

/// nsurlsessiond: runs background downloads outside the app process, so they survive the app being
/// suspended or killed, and reports their progress and outcome to the device, which forwards them.
actor TransferDaemon {
    /// What a task reports, in order: progress, then (on success) the finished file, then completion.
    enum Event: Sendable {
        case progress(DidWriteDataParams)
        case finished(DidFinishDownloadingParams)
        case completed(DidCompleteParams)
    }

    struct SessionKey: Hashable {
        var bundleId: String
        var identifier: String
    }

    private let timeline: Timeline
    private let httpClient: HTTPClient
    /// Whether each session is a background one (its tasks outlive the app).
    private var sessions: [SessionKey: Bool] = [:]
    private var tasks: [TaskKey: Task<Void, Never>] = [:]

    struct TaskKey: Hashable {
        var session: SessionKey
        var taskIdentifier: Int
    }

    init(timeline: Timeline) {
        self.timeline = timeline
        self.httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
    }

    func createSession(bundleId: String, identifier: String, background: Bool) {
        sessions[SessionKey(bundleId: bundleId, identifier: identifier)] = background
    }

    /// Starts a download into `temporaryFile`. `report` sees every event of the task, in order, and
    /// answers whether the app received it (what matters for `.finished`: the file's fate).
    func resume(
        bundleId: String, params: DownloadTaskParams, temporaryFile: URL,
        report: @escaping @Sendable (Event) async -> Bool
    ) throws {
        let session = SessionKey(bundleId: bundleId, identifier: params.session)
        guard sessions[session] != nil else {
            throw RPCError.refused("no session '\(params.session)': create it before resuming a task")
        }
        let key = TaskKey(session: session, taskIdentifier: params.taskIdentifier)
        guard tasks[key] == nil else {
            throw RPCError.refused("task \(params.taskIdentifier) of session '\(params.session)' is already running")
        }
        let timeline = timeline
        let client = httpClient
        tasks[key] = Task {
            await Self.download(
                params: params, to: temporaryFile, client: client, timeline: timeline, report: report)
            self.finished(key)
        }
    }

    private func finished(_ key: TaskKey) { tasks[key] = nil }

    /// The app died: the tasks of its default (non-background) sessions die with it, as they live in
    /// the app's process on iOS.
    func cancelTasksThatDieWithTheApp(bundleId: String) {
        for (key, task) in tasks where key.session.bundleId == bundleId && sessions[key.session] == false {
            task.cancel()
        }
    }

    func shutdown() async {
        let running = Array(tasks.values)
        for task in running { task.cancel() }
        for task in running { await task.value }
        try? await httpClient.shutdown()
    }

    private static func download(
        params: DownloadTaskParams, to file: URL, client: HTTPClient, timeline: Timeline,
        report: @Sendable (Event) async -> Bool
    ) async {
        let session = params.session
        let taskId = params.taskIdentifier
        timeline.publish(.transferStarted, source: "transfer", ["session": session, "task": "\(taskId)", "url": params.url])
        do {
            guard let url = URL(string: params.url), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw TaskError(code: -1000, localizedDescription: "bad URL: \(params.url)")
            }
            var request = HTTPClientRequest(url: params.url)
            request.headers.add(name: "User-Agent", value: "nsurlsessiond (PushHarness)")
            // As on iOS, an HTTP error status still completes the download: the body is the file.
            let response = try await client.execute(request, timeout: .seconds(300))
            let expected = Int64(response.headers.first(name: "content-length") ?? "") ?? -1
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            var hasher = SHA256()
            var written: Int64 = 0
            var lastPublished = ContinuousClock.now
            for try await chunk in response.body {
                let bytes = Data(chunk.readableBytesView)
                try handle.write(contentsOf: bytes)
                hasher.update(data: bytes)
                written += Int64(bytes.count)
                _ = await report(
                    .progress(
                        DidWriteDataParams(
                            session: session, taskIdentifier: taskId, bytesWritten: Int64(bytes.count),
                            totalBytesWritten: written, totalBytesExpectedToWrite: expected)))
                if lastPublished.duration(to: .now) >= .milliseconds(250) || written == expected {
                    lastPublished = .now
                    timeline.publish(
                        .transferProgress, source: "transfer",
                        ["session": session, "task": "\(taskId)", "bytes": "\(written)", "expected": "\(expected)"])
                }
            }
            if expected >= 0, written != expected {
                throw TaskError(
                    code: -1005, localizedDescription: "the network connection was lost after \(written) of \(expected) bytes")
            }
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            timeline.publish(
                .transferCompleted, source: "transfer",
                [
                    "session": session, "task": "\(taskId)", "bytes": "\(written)", "sha256": digest,
                    "status": "\(response.status.code)",
                ])
            let received = await report(
                .finished(
                    DidFinishDownloadingParams(
                        session: session, taskIdentifier: taskId, location: file.path,
                        statusCode: Int(response.status.code))))
            if FileManager.default.fileExists(atPath: file.path) {
                try? FileManager.default.removeItem(at: file)
                let reason =
                    received
                    ? "the app did not move the file in urlSession(_:downloadTask:didFinishDownloadingTo:); it was deleted when the method returned"
                    : "the app was not running to receive urlSession(_:downloadTask:didFinishDownloadingTo:); the file was deleted"
                timeline.publish(.transferFileLost, source: "transfer", ["session": session, "task": "\(taskId)", "reason": reason])
            }
            _ = await report(.completed(DidCompleteParams(session: session, taskIdentifier: taskId, error: nil)))
        } catch {
            try? FileManager.default.removeItem(at: file)
            let taskError =
                (error as? TaskError)
                ?? (Task.isCancelled
                    ? TaskError(code: -999, localizedDescription: "cancelled")
                    : TaskError(code: -1005, localizedDescription: "\(error)"))
            timeline.publish(
                .transferFailed, source: "transfer",
                ["session": session, "task": "\(taskId)", "code": "\(taskError.code)", "error": taskError.localizedDescription])
            _ = await report(.completed(DidCompleteParams(session: session, taskIdentifier: taskId, error: taskError)))
        }
    }
}
