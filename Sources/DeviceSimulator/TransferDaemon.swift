import AsyncHTTPClient
import Crypto
import DeviceProtocol
import Foundation
import HTTPServiceSupport
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// How nsurlsessiond treats a download that goes wrong (docs/ios-rules.md U8, U11).
public struct TransferPolicy: Sendable, Equatable {
    /// `timeoutIntervalForRequest`: how long a connection may stay silent (no header, no body byte)
    /// before the attempt counts as timed out. iOS: 60 s.
    public var requestTimeout: Duration = .seconds(60)
    /// `timeoutIntervalForResource`: how long a background task keeps retrying before it fails. iOS: 7 days.
    public var resourceTimeout: Duration = .seconds(7 * 24 * 3600)
    /// The wait before the first retry of a background task; it doubles after each attempt that
    /// received nothing, up to a minute. Apple does not document nsurlsessiond's timing.
    public var retryDelay: Duration = .seconds(1)

    public init() {}
}

/// nsurlsessiond: runs background downloads outside the app process, so they survive the app being
/// suspended or killed, and reports their progress and outcome to the device, which forwards them.
///
/// A background session's task whose connection is lost or times out is retried, as iOS does: resumed
/// from the byte it reached with `Range` and `If-Range` when the server allows it, otherwise started
/// over, with a timeline event saying which and why. A default session's task fails at once.
actor TransferDaemon {
    /// What a task reports, in order: progress, then (on success) the finished file, then completion.
    enum Event: Sendable {
        /// A task made from resume data went on from its partial file.
        case resumed(DidResumeParams)
        case progress(DidWriteDataParams)
        case finished(DidFinishDownloadingParams)
        case completed(DidCompleteParams)
    }

    struct SessionKey: Hashable {
        var bundleId: String
        var identifier: String
    }

    struct TaskKey: Hashable {
        var session: SessionKey
        var taskIdentifier: Int
    }

    private let timeline: Timeline
    private let policy: TransferPolicy
    /// Retry waits and the resource timeout are policy time; the network's own timeouts are real.
    private let clock: PolicyClock
    private let httpClient: HTTPClient
    /// The device's network, which tasks wait on.
    let gate = NetworkGate()
    /// Each session's connections per host.
    private let slots = ConnectionSlots()
    private var sessions: [SessionKey: SessionCreateParams] = [:]
    private var tasks:
        [TaskKey: (task: Task<Void, Never>, cancellation: LockedState<Cancellation?>, resumeData: LockedState<String?>)] =
            [:]

    /// Why a task was cancelled, which decides the error the app is told.
    enum Cancellation: Sendable {
        /// Its app's process ended and the task lived in it (a default session).
        case diedWithApp
        /// The user force-quit the app (docs/ios-rules.md U6).
        case forceQuit
        /// The app called `cancel()` or `cancel(byProducingResumeData:)`.
        case byApp(producingResumeData: Bool)

        var error: TaskError {
            switch self {
            case .diedWithApp:
                TaskError(
                    code: -999,
                    localizedDescription:
                        "cancelled: the task belonged to a default session, which lives in the app's process and died with it; transfers that must outlive the app need URLSessionConfiguration.background(withIdentifier:)"
                )
            case .forceQuit:
                TaskError(
                    code: -999, localizedDescription: "cancelled: the user force-quit the app",
                    backgroundTaskCancelledReason: 0)
            case .byApp:
                TaskError(code: -999, localizedDescription: "cancelled")
            }
        }

        /// Whether the app may be handed resume data (U6: "resume data may be included" after a force-quit).
        var offersResumeData: Bool {
            switch self {
            case .diedWithApp, .byApp(producingResumeData: false): false
            case .forceQuit, .byApp(producingResumeData: true): true
            }
        }
    }

    init(timeline: Timeline, policy: TransferPolicy = TransferPolicy(), clock: PolicyClock = PolicyClock()) {
        self.timeline = timeline
        self.policy = policy
        self.clock = clock
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: policy.requestTimeout.timeAmount, read: policy.requestTimeout.timeAmount)
        self.httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// A session's settings; creating a session again (a relaunched app) replaces them.
    func createSession(bundleId: String, _ params: SessionCreateParams) throws {
        if let limit = params.httpMaximumConnectionsPerHost, limit < 1 {
            throw RPCError.invalidParams("httpMaximumConnectionsPerHost must be at least 1")
        }
        sessions[SessionKey(bundleId: bundleId, identifier: params.identifier)] = params
    }

    /// Starts a download into `temporaryFile`. `report` sees every event of the task, in order, and
    /// answers whether the app received it (what matters for `.finished`: the file's fate).
    ///
    /// - Parameter createdInBackground: the app was not in the foreground: a background session's
    ///   task is then discretionary, whatever the session says (docs/ios-rules.md U2).
    ///   - rateLimited: how long the task must wait before it starts, and the limiter's delay, when
    ///     the resume rate limiter holds it (docs/ios-rules.md U9).
    func resume(
        bundleId: String, params: DownloadTaskParams, temporaryFile: URL, createdInBackground: Bool,
        rateLimited: (wait: Duration, delay: Duration)? = nil, report: @escaping @Sendable (Event) async -> Bool
    ) throws {
        let session = SessionKey(bundleId: bundleId, identifier: params.session)
        guard let settings = sessions[session] else {
            throw RPCError.refused("no session '\(params.session)': create it before resuming a task")
        }
        let key = TaskKey(session: session, taskIdentifier: params.taskIdentifier)
        guard tasks[key] == nil else {
            throw RPCError.refused("task \(params.taskIdentifier) of session '\(params.session)' is already running")
        }
        var seed: ResumeData?
        if let encoded = params.resumeData {
            guard let data = ResumeData(encoded: encoded) else {
                throw RPCError.invalidParams("resumeData is not what a cancellation or a failure of this device gave")
            }
            seed = data
        }
        let requirements = NetworkRequirements(
            discretionary: (settings.discretionary ?? false) || (settings.background && createdInBackground),
            allowsCellularAccess: settings.allowsCellularAccess ?? true)
        let cancellation = LockedState<Cancellation?>(nil)
        let resumeData = LockedState<String?>(nil)
        let host = URL(string: params.url)?.host ?? ""
        let connections = (
            slots: slots, key: "\(bundleId)/\(params.session)/\(host)",
            limit: settings.httpMaximumConnectionsPerHost ?? 4
        )
        let download = Download(
            params: params, file: temporaryFile, retries: settings.background, requirements: requirements,
            gate: gate, policy: policy, clock: clock, client: httpClient, timeline: timeline,
            cancellation: cancellation,
            rateLimited: rateLimited, seed: seed, resumeData: resumeData, connections: connections, report: report)
        let task = Task {
            await download.run()
            self.finished(key)
        }
        tasks[key] = (task, cancellation, resumeData)
    }

    /// `cancel()` or `cancel(byProducingResumeData:)`: ends the task (-999) and returns its resume
    /// data, when it was asked for and the download can go on later (docs/ios-rules.md U11).
    func cancel(bundleId: String, _ params: CancelTaskParams) async throws -> String? {
        let key = TaskKey(
            session: SessionKey(bundleId: bundleId, identifier: params.session), taskIdentifier: params.taskIdentifier)
        guard let running = tasks[key] else {
            throw RPCError.refused("task \(params.taskIdentifier) of session '\(params.session)' is not running")
        }
        running.cancellation.withLock { $0 = .byApp(producingResumeData: params.produceResumeData) }
        running.task.cancel()
        await running.task.value
        return running.resumeData.withLock { $0 }
    }

    private func finished(_ key: TaskKey) { tasks[key] = nil }

    /// The app's process ended: the tasks of its default sessions die with it, as they live in the
    /// app's process on iOS; after a force-quit, its background sessions' tasks are cancelled too.
    func cancelTasksOfExitedApp(bundleId: String, forceQuit: Bool) {
        for (key, running) in tasks where key.session.bundleId == bundleId {
            let background = sessions[key.session]?.background ?? false
            guard !background || forceQuit else { continue }
            running.cancellation.withLock { $0 = background ? .forceQuit : .diedWithApp }
            running.task.cancel()
        }
    }

    func shutdown() async {
        let running = tasks.values.map(\.task)
        for task in running { task.cancel() }
        for task in running { await task.value }
        try? await httpClient.shutdown()
    }
}

/// The waits between a background task's attempts: `first`, doubling after each attempt that received
/// nothing, up to `limit`; back to `first` after an attempt that received bytes.
struct RetryBackoff {
    let first: Duration
    var limit: Duration = .seconds(60)
    private var current: Duration

    init(first: Duration) {
        self.first = first
        self.current = first
    }

    mutating func delay(afterAttemptThatReceivedBytes receivedBytes: Bool) -> Duration {
        if receivedBytes { current = first }
        defer { current = min(current * 2, limit) }
        return min(current, limit)
    }
}

/// One download task, over as many attempts as it takes.
private struct Download: Sendable {
    let params: DownloadTaskParams
    let file: URL
    /// Background sessions retry lost connections and timeouts; default sessions fail.
    let retries: Bool
    let requirements: NetworkRequirements
    let gate: NetworkGate
    let policy: TransferPolicy
    let clock: PolicyClock
    let client: HTTPClient
    let timeline: Timeline
    let cancellation: LockedState<TransferDaemon.Cancellation?>
    let rateLimited: (wait: Duration, delay: Duration)?
    /// The resume data the task was made from, if any.
    let seed: ResumeData?
    /// Where the task leaves resume data for a cancellation that asked for it.
    let resumeData: LockedState<String?>
    /// The session's connection slots for the task's host, and how many there are.
    let connections: (slots: ConnectionSlots, key: String, limit: Int)
    let report: @Sendable (TransferDaemon.Event) async -> Bool

    /// What the task has so far, across attempts. A class so that an attempt can run as a child task
    /// racing the network going away; only one attempt runs at a time, and the task awaits it.
    final class Progress: @unchecked Sendable {
        var written: Int64 = 0
        var expected: Int64 = -1
        var hasher = SHA256()
        /// From the last response that carried the file; nil before any.
        var resume: ResumeValidator?
        /// Body bytes the current attempt received.
        var receivedInAttempt: Int64 = 0
        /// The task was made from resume data and has not gone on from it yet.
        var fromResumeData = false
    }

    /// The partial download resume data names, if it is one the daemon could have made for this task:
    /// a `CFNetworkDownload_*` file in the task's own folder (the app's tmp/), a regular file with no
    /// other name (not a link, not a hard link to a file elsewhere). The app runs as the harness's user,
    /// so this is not a wall against it; it keeps the daemon from being talked into taking a file that
    /// was never a download.
    static func partialDownload(named path: String, beside file: URL) -> URL? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard name.hasPrefix("CFNetworkDownload_"), !name.contains("/"),
            URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
                == file.standardizedFileURL.deletingLastPathComponent().path
        else { return nil }
        let candidate = file.deletingLastPathComponent().appendingPathComponent(name)
        var info = stat()
        guard lstat(candidate.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            return nil
        }
        return candidate
    }

    /// Starts from resume data: the partial file becomes this task's, hashed so far, with the validator
    /// to resume against. Gone or changed, the download simply starts over.
    private func takeOver(_ seed: ResumeData, into progress: Progress) {
        // Resume data comes from the app, which can write anything into it: only a partial download in
        // this task's own folder (the app's tmp/) is taken, never a file elsewhere on the host.
        guard let partial = Self.partialDownload(named: seed.file, beside: file) else {
            publish(
                .transferRestarted,
                ["lostBytes": "\(seed.bytes)", "why": "the resume data names a file outside the app's tmp/"])
            return
        }
        guard let size = (try? FileManager.default.attributesOfItem(atPath: partial.path))?[.size] as? Int64,
            size == seed.bytes
        else {
            publish(
                .transferRestarted, ["lostBytes": "\(seed.bytes)", "why": "the resume data's partial file is gone"])
            return
        }
        if partial.path != file.path {
            try? FileManager.default.removeItem(at: file)
            guard (try? FileManager.default.moveItem(at: partial, to: file)) != nil else { return }
        }
        guard let handle = try? FileHandle(forReadingFrom: file) else { return }
        defer { try? handle.close() }
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { progress.hasher.update(data: chunk) }
        progress.written = seed.bytes
        progress.expected = seed.expectedBytes
        let isETag = seed.validator.hasPrefix("\"")
        progress.resume = ResumeValidator(
            acceptRanges: "bytes", etag: isETag ? seed.validator : nil, lastModified: isETag ? nil : seed.validator)
        progress.fromResumeData = true
    }

    /// An attempt that ended early; `error` is what the app would see if the task gives up.
    struct Interruption: Error {
        var error: TaskError
    }

    func run() async {
        var started: EventAttributes = [
            "url": params.url, "discretionary": "\(requirements.discretionary)",
            "allowsCellularAccess": "\(requirements.allowsCellularAccess)",
        ]
        started["taskDescription"] = params.taskDescription
        publish(.transferStarted, started)
        let progress = Progress()
        if let seed { takeOver(seed, into: progress) }
        if let rateLimited {
            publish(
                .transferWaiting,
                [
                    "why":
                        "the resume rate limiter holds tasks created in the background for \(rateLimited.delay) after the app's last background relaunch (it doubles with each)",
                    "network": gate.network, "for": "\(rateLimited.wait)",
                ])
            do { try await clock.sleep(for: rateLimited.wait) } catch { return await fail(Self.cancelled, progress) }
            publish(.transferUnblocked, ["network": gate.network, "after": "rate limiter"])
        }
        let giveUpAt = clock.now + policy.resourceTimeout
        var backoff = RetryBackoff(first: policy.retryDelay)
        var attempt = 1
        while true {
            if let why = requirements.whyNot(on: gate.network) {
                publish(.transferWaiting, ["why": why, "network": gate.network])
                await gate.waitUntilAllowed(requirements)
                if Task.isCancelled { return await fail(Self.cancelled, progress) }
                publish(.transferUnblocked, ["network": gate.network])
            }
            do {
                let status = try await attemptWhileTheNetworkAllows(attempt, progress)
                await finish(status: status, progress: progress)
                return
            } catch let interruption as Interruption {
                // Lost with the network: retry as soon as it suits the task again, not after a wait.
                let delay =
                    requirements.whyNot(on: gate.network) != nil
                    ? .zero : backoff.delay(afterAttemptThatReceivedBytes: progress.receivedInAttempt > 0)
                let retry =
                    retries && !Task.isCancelled && interruption.error.code != -1000
                    && clock.now + delay < giveUpAt
                guard retry else { return await fail(interruption.error, progress) }
                var attributes: EventAttributes = [
                    "attempt": "\(attempt)", "bytes": "\(progress.written)", "expected": "\(progress.expected)",
                    "error": interruption.error.localizedDescription, "code": "\(interruption.error.code)",
                    "retryIn": "\(delay)",
                ]
                if progress.written == 0 {
                    attributes["next"] = "start"
                } else if let why = progress.resume?.whyNotResumable {
                    attributes["next"] = "restart from zero"
                    attributes["why"] = why
                } else {
                    attributes["next"] = "resume from byte \(progress.written)"
                }
                publish(.transferInterrupted, attributes)
                if delay > .zero {
                    do { try await clock.sleep(for: delay) } catch { return await fail(Self.cancelled, progress) }
                }
                attempt += 1
            } catch {
                return await fail(Self.taskError(for: error), progress)
            }
        }
    }

    /// One attempt, on one of the session's connections to the host, cut short if the network stops
    /// suiting the task meanwhile.
    private func attemptWhileTheNetworkAllows(_ number: Int, _ progress: Progress) async throws -> Int {
        if connections.slots.isFull(connections.key, limit: connections.limit) {
            publish(
                .transferWaiting,
                [
                    "why":
                        "the session's HTTPMaximumConnectionsPerHost (\(connections.limit)) connections to the host are in use",
                    "network": gate.network,
                ])
        }
        guard await connections.slots.acquire(connections.key, limit: connections.limit) else {
            throw CancellationError()
        }
        defer { connections.slots.release(connections.key) }
        enum Outcome: Sendable {
            case finished(Int)
            case failed(any Error)
            case networkLost
        }
        let outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do { return .finished(try await self.attempt(number, progress)) } catch { return .failed(error) }
            }
            group.addTask {
                await gate.waitUntilDisallowed(requirements)
                return .networkLost
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        switch outcome {
        case .finished(let status):
            return status
        case .failed(let error):
            throw error
        case .networkLost:
            let why = requirements.whyNot(on: gate.network) ?? "the network changed"
            throw Interruption(
                error: TaskError(
                    code: -1005,
                    localizedDescription: "the network connection was lost after \(progress.written) bytes (\(why))"))
        }
    }

    /// One request: resumes with `Range` + `If-Range` when the task has bytes and the server allows
    /// it, else (re)starts from zero. Returns the response's status once the body is complete.
    private func attempt(_ number: Int, _ progress: Progress) async throws -> Int {
        guard let url = URL(string: params.url), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw Interruption(error: TaskError(code: -1000, localizedDescription: "bad URL: \(params.url)"))
        }
        progress.receivedInAttempt = 0
        var request = HTTPClientRequest(url: params.url)
        request.headers.add(name: "User-Agent", value: "nsurlsessiond (PushHarness)")
        let resumeFrom: Int64? =
            progress.written > 0 && progress.resume?.whyNotResumable == nil ? progress.written : nil
        if let resumeFrom, let validator = progress.resume?.validator {
            request.headers.add(name: "Range", value: "bytes=\(resumeFrom)-")
            request.headers.add(name: "If-Range", value: validator)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: policy.requestTimeout.timeAmount)
        } catch {
            throw Interruption(error: Self.taskError(for: error))
        }
        let headers = response.headers
        // As on iOS, an HTTP error status still completes the download: the body is the file.
        let range = headers.first(name: "content-range").flatMap(ContentRange.init)
        let appending: Bool
        if let resumeFrom, response.status == .partialContent, let range, range.first == resumeFrom {
            appending = true
            progress.expected = range.complete ?? -1
            publish(
                .transferResumed,
                ["attempt": "\(number)", "fromByte": "\(resumeFrom)", "expected": "\(progress.expected)"])
            if progress.fromResumeData {
                progress.fromResumeData = false
                _ = await report(
                    .resumed(
                        DidResumeParams(
                            session: params.session, taskIdentifier: params.taskIdentifier, fileOffset: resumeFrom,
                            expectedTotalBytes: progress.expected)))
            }
        } else {
            appending = false
            if progress.written > 0 {
                let why =
                    resumeFrom == nil
                    ? progress.resume?.whyNotResumable ?? "the download could not resume"
                    : response.status == .partialContent
                        ? "the server answered the resume from byte \(resumeFrom!) with Content-Range \(headers.first(name: "content-range") ?? "(none)")"
                        : "the server answered \(response.status.code) to Range with If-Range \(progress.resume?.validator ?? ""): the file changed or ranges are not honoured"
                publish(.transferRestarted, ["attempt": "\(number)", "lostBytes": "\(progress.written)", "why": why])
            }
            progress.written = 0
            progress.hasher = SHA256()
            progress.expected = Int64(headers.first(name: "content-length") ?? "") ?? -1
        }
        progress.resume = ResumeValidator(
            acceptRanges: headers.first(name: "accept-ranges"), etag: headers.first(name: "etag"),
            lastModified: headers.first(name: "last-modified"))
        if !appending { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.seekToEnd()
        var lastPublished = ContinuousClock.now
        do {
            for try await chunk in response.body {
                let bytes = Data(chunk.readableBytesView)
                try handle.write(contentsOf: bytes)
                progress.hasher.update(data: bytes)
                progress.written += Int64(bytes.count)
                progress.receivedInAttempt += Int64(bytes.count)
                _ = await report(
                    .progress(
                        DidWriteDataParams(
                            session: params.session, taskIdentifier: params.taskIdentifier,
                            bytesWritten: Int64(bytes.count), totalBytesWritten: progress.written,
                            totalBytesExpectedToWrite: progress.expected)))
                if lastPublished.duration(to: .now) >= .milliseconds(250) || progress.written == progress.expected {
                    lastPublished = .now
                    publish(.transferProgress, ["bytes": "\(progress.written)", "expected": "\(progress.expected)"])
                }
            }
        } catch {
            throw Interruption(error: Self.taskError(for: error, after: progress.written, of: progress.expected))
        }
        if progress.expected >= 0, progress.written != progress.expected {
            throw Interruption(
                error: TaskError(
                    code: -1005,
                    localizedDescription:
                        "the network connection was lost after \(progress.written) of \(progress.expected) bytes"))
        }
        return Int(response.status.code)
    }

    private func finish(status: Int, progress: Progress) async {
        let digest = progress.hasher.finalize().map { String(format: "%02x", $0) }.joined()
        publish(.transferCompleted, ["bytes": "\(progress.written)", "sha256": digest, "status": "\(status)"])
        let received = await report(
            .finished(
                DidFinishDownloadingParams(
                    session: params.session, taskIdentifier: params.taskIdentifier, location: file.path,
                    statusCode: status)))
        if FileManager.default.fileExists(atPath: file.path) {
            try? FileManager.default.removeItem(at: file)
            let reason =
                received
                ? "the app did not move the file in urlSession(_:downloadTask:didFinishDownloadingTo:); it was deleted when the method returned"
                : "the app was not running to receive urlSession(_:downloadTask:didFinishDownloadingTo:); the file was deleted"
            publish(.transferFileLost, ["reason": reason])
        }
        _ = await report(
            .completed(DidCompleteParams(session: params.session, taskIdentifier: params.taskIdentifier, error: nil)))
    }

    /// Ends the task with `error`. The partial file is kept, and its resume data handed over with the
    /// error, when the download can go on later: bytes, ranges and a validator (docs/ios-rules.md U11), and a
    /// failure or a cancellation that offers it.
    private func fail(_ error: TaskError, _ progress: Progress) async {
        let cancelledBy = Task.isCancelled ? cancellation.withLock { $0 } : nil
        var error = Task.isCancelled ? cancelledBy?.error ?? Self.cancelled : error
        let offers = Task.isCancelled ? cancelledBy?.offersResumeData ?? false : true
        if offers, progress.written > 0, progress.resume?.whyNotResumable == nil,
            let validator = progress.resume?.validator, FileManager.default.fileExists(atPath: file.path)
        {
            let data = ResumeData(
                url: params.url, file: file.path, bytes: progress.written, expectedBytes: progress.expected,
                validator: validator
            ).encoded
            error.resumeData = data
            resumeData.withLock { $0 = data }
        } else {
            try? FileManager.default.removeItem(at: file)
        }
        var attributes: EventAttributes = ["code": "\(error.code)", "error": error.localizedDescription]
        attributes["cancelledReason"] = error.backgroundTaskCancelledReason.map { "\($0)" }
        attributes["resumeData"] = "\(error.resumeData != nil)"
        publish(.transferFailed, attributes)
        _ = await report(
            .completed(DidCompleteParams(session: params.session, taskIdentifier: params.taskIdentifier, error: error)))
    }

    private func publish(_ kind: EventKind, _ attributes: EventAttributes) {
        var attributes = attributes
        attributes["session"] = params.session
        attributes["task"] = "\(params.taskIdentifier)"
        timeline.publish(kind, source: "transfer", attributes)
    }

    static let cancelled = TaskError(code: -999, localizedDescription: "cancelled")

    /// The `NSURLErrorDomain` code iOS would report for a failure of the HTTP client.
    static func taskError(for error: any Error, after written: Int64 = 0, of expected: Int64 = -1) -> TaskError {
        if let error = error as? TaskError { return error }
        if error is CancellationError || Task.isCancelled { return cancelled }
        if let error = error as? HTTPClientError {
            switch error {
            case .readTimeout, .deadlineExceeded:
                return TaskError(code: -1001, localizedDescription: "the request timed out after \(written) bytes")
            case .connectTimeout:
                return TaskError(code: -1001, localizedDescription: "the request timed out connecting")
            case .cancelled:
                return cancelled
            default:
                break
            }
        }
        if error is NIOConnectionError || (error as? IOError)?.errnoCode == ECONNREFUSED {
            return TaskError(code: -1004, localizedDescription: "could not connect to the server: \(error)")
        }
        let of = expected >= 0 ? " of \(expected)" : ""
        let cause = (error as? IOError).map { String(cString: strerror($0.errnoCode)).lowercased() } ?? "\(error)"
        return TaskError(
            code: -1005, localizedDescription: "the network connection was lost after \(written)\(of) bytes (\(cause))")
    }
}
