import AsyncHTTPClient
import Crypto
import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// One download task over as many attempts as it takes: the requests, the file writes and the reports.
/// Every decision (what to ask for, what a response means, whether to retry) is ``DownloadAttempts``'s.
/// The file's writes and reads, and hashing it, run on NIO's blocking-I/O threads: a slow disk or a
/// large partial file never holds a thread of the cooperative pool.
struct DownloadTask: Sendable {
    let params: DownloadTaskParams
    let file: URL
    let requirements: NetworkRequirements
    let gate: NetworkGate
    let policy: TransferPolicy
    let clock: PolicyClock
    let client: HTTPClient
    let timeline: Timeline
    let control: DownloadControl
    let rateLimited: (wait: Duration, delay: Duration)?
    /// The resume data the task was made from, if any.
    let seed: ResumeData?
    /// The session's connection slots for the task's host, and how many there are.
    let connections: (slots: ConnectionSlots, key: String, limit: Int)
    /// Background sessions retry lost connections and timeouts; default sessions fail.
    let retries: Bool
    /// Where the daemon dials instead of the URL's `host:port` (the `transfer-media` link's fault
    /// proxy); the request still names the URL's host.
    let dial: String?
    let report: @Sendable (TransferDaemon.Event) async -> Bool

    /// What the task has so far, across attempts. A class so that an attempt can run as a child task
    /// racing the network going away; only one attempt runs at a time, and the task awaits it.
    final class Progress: @unchecked Sendable {
        var attempts: DownloadAttempts
        var hasher = SHA256()

        init(_ attempts: DownloadAttempts) { self.attempts = attempts }
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
        let progress = Progress(
            DownloadAttempts(
                retries: retries, giveUpAt: clock.now + policy.resourceTimeout, firstDelay: policy.retryDelay))
        if let seed { await takeOver(seed, into: progress) }
        if let rateLimited {
            publish(
                .transferWaiting,
                [
                    "why":
                        "the resume rate limiter holds tasks created in the background for \(rateLimited.delay) after the app's last background relaunch (it doubles with each)",
                    "network": gate.network, "for": "\(rateLimited.wait)",
                ])
            do { try await clock.sleep(for: rateLimited.wait) } catch { return await fail(.cancelled, progress) }
            publish(.transferUnblocked, ["network": gate.network, "after": "rate limiter"])
        }
        while true {
            if let why = requirements.whyNot(on: gate.network) {
                publish(.transferWaiting, ["why": why, "network": gate.network])
                await gate.waitUntilAllowed(requirements)
                if Task.isCancelled { return await fail(.cancelled, progress) }
                publish(.transferUnblocked, ["network": gate.network])
            }
            do {
                let status = try await attemptWhileTheNetworkAllows(progress)
                return await finish(status: status, progress: progress)
            } catch let interruption as Interruption {
                let next = progress.attempts.interrupted(
                    interruption.error, networkAllows: requirements.whyNot(on: gate.network) == nil,
                    cancelled: Task.isCancelled, now: clock.now)
                guard case .retry(let attempt, let delay, let resumeFrom, let why) = next else {
                    return await fail(interruption.error, progress)
                }
                var attributes: EventAttributes = [
                    "attempt": "\(attempt)", "bytes": "\(progress.attempts.written)",
                    "expected": "\(progress.attempts.expected)", "error": interruption.error.localizedDescription,
                    "code": "\(interruption.error.code)", "retryIn": "\(delay)",
                ]
                attributes["next"] =
                    resumeFrom.map { "resume from byte \($0)" } ?? (why == nil ? "start" : "restart from zero")
                attributes["why"] = why
                publish(.transferInterrupted, attributes)
                if delay > .zero {
                    do { try await clock.sleep(for: delay) } catch { return await fail(.cancelled, progress) }
                }
            } catch {
                return await fail(.transferFailure(error), progress)
            }
        }
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
    private func takeOver(_ seed: ResumeData, into progress: Progress) async {
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
        let file = file
        do {
            progress.hasher = try await NIOThreadPool.singleton.runIfActive {
                if partial.path != file.path {
                    if FileManager.default.fileExists(atPath: file.path) {
                        try FileManager.default.removeItem(at: file)
                    }
                    try FileManager.default.moveItem(at: partial, to: file)
                }
                let handle = try FileHandle(forReadingFrom: file)
                defer { try? handle.close() }  // read only: closing it loses nothing
                var hasher = SHA256()
                while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
                return hasher
            }
        } catch {
            publish(
                .transferRestarted,
                ["lostBytes": "\(seed.bytes)", "why": "the resume data's partial file cannot be taken over: \(error)"])
            return
        }
        progress.attempts.seed(bytes: seed.bytes, expected: seed.expectedBytes, validator: seed.validator)
    }

    /// One attempt, on one of the session's connections to the host, cut short if the network stops
    /// suiting the task meanwhile.
    private func attemptWhileTheNetworkAllows(_ progress: Progress) async throws -> Int {
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
                do { return .finished(try await self.attempt(progress)) } catch { return .failed(error) }
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
                    localizedDescription:
                        "the network connection was lost after \(progress.attempts.written) bytes (\(why))"))
        }
    }

    /// One request, as ``DownloadAttempts`` asks it; returns the response's status once the body is complete.
    private func attempt(_ progress: Progress) async throws -> Int {
        guard let url = URL(string: params.url), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw Interruption(error: TaskError(code: -1000, localizedDescription: "bad URL: \(params.url)"))
        }
        var request = HTTPClientRequest(url: params.url)
        if let dial, let authority = url.authority, var routed = URLComponents(string: params.url) {
            let (host, port) = TransferDaemon.split(dial)
            routed.host = host
            routed.port = port
            request.url = routed.string ?? params.url
            request.headers.add(name: "Host", value: authority)
        }
        request.headers.add(name: "User-Agent", value: "nsurlsessiond (PushHarness)")
        if case .rest(let from, let validator) = progress.attempts.begin() {
            request.headers.add(name: "Range", value: "bytes=\(from)-")
            request.headers.add(name: "If-Range", value: validator)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: TimeAmount(policy.requestTimeout))
        } catch {
            throw Interruption(error: .transferFailure(error))
        }
        let headers = response.headers
        let number = progress.attempts.number
        let body = progress.attempts.responded(
            status: Int(response.status.code), contentRange: headers.first(name: "content-range"),
            contentLength: headers.first(name: "content-length"), acceptRanges: headers.first(name: "accept-ranges"),
            etag: headers.first(name: "etag"), lastModified: headers.first(name: "last-modified"))
        switch body {
        case .append(let from, let expected, let announce):
            publish(.transferResumed, ["attempt": "\(number)", "fromByte": "\(from)", "expected": "\(expected)"])
            if announce {
                _ = await report(
                    .resumed(
                        DidResumeParams(
                            session: params.session, taskIdentifier: params.taskIdentifier, fileOffset: from,
                            expectedTotalBytes: expected)))
            }
        case .whole(_, let lost, let why):
            if let why { publish(.transferRestarted, ["attempt": "\(number)", "lostBytes": "\(lost)", "why": why]) }
            progress.hasher = SHA256()
        }
        let file = file
        let truncating = if case .whole = body { true } else { false }
        let handle = try await NIOThreadPool.singleton.runIfActive {
            if truncating { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            return handle
        }
        defer { try? handle.close() }  // every write was made by write(contentsOf:), which has no buffer
        var lastPublished = ContinuousClock.now
        do {
            for try await chunk in response.body {
                let bytes = Data(chunk.readableBytesView)
                try await NIOThreadPool.singleton.runIfActive {
                    try handle.write(contentsOf: bytes)
                    progress.hasher.update(data: bytes)
                }
                progress.attempts.received(Int64(bytes.count))
                let (written, expected) = (progress.attempts.written, progress.attempts.expected)
                _ = await report(
                    .progress(
                        DidWriteDataParams(
                            session: params.session, taskIdentifier: params.taskIdentifier,
                            bytesWritten: Int64(bytes.count), totalBytesWritten: written,
                            totalBytesExpectedToWrite: expected)))
                if lastPublished.duration(to: .now) >= .milliseconds(250) || written == expected {
                    lastPublished = .now
                    publish(.transferProgress, ["bytes": "\(written)", "expected": "\(expected)"])
                }
            }
        } catch {
            throw Interruption(
                error: .transferFailure(error, after: progress.attempts.written, of: progress.attempts.expected))
        }
        if progress.attempts.endedShort {
            throw Interruption(
                error: TaskError(
                    code: -1005,
                    localizedDescription:
                        "the network connection was lost after \(progress.attempts.written) of \(progress.attempts.expected) bytes"
                ))
        }
        return Int(response.status.code)
    }

    private func finish(status: Int, progress: Progress) async {
        // Cancelled before the last byte was in: the task ends as cancelled; after, a cancel does nothing.
        guard control.beginDelivery() else { return await fail(.cancelled, progress) }
        let digest = progress.hasher.finalize().map { String(format: "%02x", $0) }.joined()
        publish(
            .transferCompleted, ["bytes": "\(progress.attempts.written)", "sha256": digest, "status": "\(status)"])
        let received = await report(
            .finished(
                DidFinishDownloadingParams(
                    session: params.session, taskIdentifier: params.taskIdentifier, location: file.path,
                    statusCode: status)))
        if FileManager.default.fileExists(atPath: file.path) {
            // Deleted as iOS deletes it; one that cannot be removed is a stray file in tmp/, never read.
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

    /// Ends the task with `error`, or with the cancellation's own error when it was cancelled. The partial
    /// file is kept, and its resume data handed over with the error, when ``DownloadAttempts`` says the
    /// download can go on later.
    private func fail(_ error: TaskError, _ progress: Progress) async {
        let cancelledBy = control.cancellation
        let cancelled = Task.isCancelled || cancelledBy != nil
        var error = cancelled ? cancelledBy?.error ?? .cancelled : error
        let offered = cancelled ? cancelledBy?.offersResumeData ?? false : true
        if let resume = progress.attempts.resumeData(offered: offered),
            FileManager.default.fileExists(atPath: file.path)
        {
            let data = ResumeData(
                url: params.url, file: file.path, bytes: resume.bytes, expectedBytes: resume.expected,
                validator: resume.validator
            ).encoded
            error.resumeData = data
            control.resumeData.withLock { $0 = data }
        } else {
            // With no resume data nothing reads it again: one left is only a stray file in tmp/.
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
}
