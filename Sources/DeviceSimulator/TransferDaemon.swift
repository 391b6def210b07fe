import AsyncHTTPClient
import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore

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
    /// `host:port` the daemon dials in place of another (``setRoutes(_:)``).
    private var routes: [String: String] = [:]
    private var tasks: [TaskKey: (task: Task<Void, Never>, control: DownloadControl)] = [:]

    init(timeline: Timeline, policy: TransferPolicy = TransferPolicy(), clock: PolicyClock = PolicyClock()) {
        self.timeline = timeline
        self.policy = policy
        self.clock = clock
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(
            connect: TimeAmount(policy.requestTimeout), read: TimeAmount(policy.requestTimeout))
        self.httpClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// From now on, requests to a URL whose `host:port` is a key go to that key's value: the harness
    /// puts the `transfer-media` link's fault proxy there. The request still names the URL's host.
    func setRoutes(_ routes: [String: String]) { self.routes = routes }

    /// `host:port` (`[::1]:80` for IPv6) as host and port.
    static func split(_ authority: String) -> (host: String, port: Int?) {
        guard let colon = authority.lastIndex(of: ":") else { return (authority, nil) }
        var host = String(authority[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, Int(authority[authority.index(after: colon)...]))
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
        let control = DownloadControl()
        let host = URL(string: params.url)?.host ?? ""
        let connections = (
            slots: slots, key: "\(bundleId)/\(params.session)/\(host)",
            limit: settings.httpMaximumConnectionsPerHost ?? 4
        )
        let download = DownloadTask(
            params: params, file: temporaryFile, requirements: requirements, gate: gate, policy: policy, clock: clock,
            client: httpClient, timeline: timeline, control: control, rateLimited: rateLimited, seed: seed,
            connections: connections, retries: settings.background,
            dial: URL(string: params.url)?.authority.flatMap { routes[$0] }, report: report)
        // Kept in `tasks` by its key: cancel(...) and the app's end cancel it, shutdown() awaits it.
        let task = Task {
            await download.run()
            self.finished(key)
        }
        tasks[key] = (task, control)
    }

    /// `cancel()` or `cancel(byProducingResumeData:)`: ends the task (-999) and returns its resume
    /// data, when it was asked for and the download can go on later (docs/ios-rules.md U11). A task that
    /// has its whole file and is handing it over is past cancelling: nothing happens and there is no
    /// resume data, without waiting for the app's answer.
    func cancel(bundleId: String, _ params: CancelTaskParams) async throws -> String? {
        let key = TaskKey(
            session: SessionKey(bundleId: bundleId, identifier: params.session), taskIdentifier: params.taskIdentifier)
        guard let running = tasks[key] else {
            throw RPCError.refused("task \(params.taskIdentifier) of session '\(params.session)' is not running")
        }
        guard running.control.cancel(.byApp(producingResumeData: params.produceResumeData)) else { return nil }
        running.task.cancel()
        await running.task.value
        return running.control.resumeData.withLock { $0 }
    }

    private func finished(_ key: TaskKey) { tasks[key] = nil }

    /// The app's process ended: the tasks of its default sessions die with it, as they live in the
    /// app's process on iOS; after a force-quit, its background sessions' tasks are cancelled too.
    func cancelTasksOfExitedApp(bundleId: String, forceQuit: Bool) {
        for (key, running) in tasks where key.session.bundleId == bundleId {
            let background = sessions[key.session]?.background ?? false
            guard !background || forceQuit else { continue }
            guard running.control.cancel(background ? .forceQuit : .diedWithApp) else { continue }
            running.task.cancel()
        }
    }

    func shutdown() async {
        let running = tasks.values.map(\.task)
        for task in running { task.cancel() }
        for task in running { await task.value }
        // Its one error is a client shut down already: every download has ended either way.
        try? await httpClient.shutdown()
    }
}

extension URL {
    /// `host:port` as the URL names them (`[::1]:80` for IPv6), or the host alone without a port.
    var authority: String? {
        guard let host else { return nil }
        let shown = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}
