import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore
import NIOFoundationCompat

#if canImport(Glibc)
import Glibc
#endif

/// The device socket: the `hello` handshake and the requests an app makes of its "OS".
extension DeviceSimulator {
    func handleConnection(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let connection = AppConnection()
        let peer = await PeerProcess.pid(of: channel.channel)
        let key = ObjectIdentifier(connection)
        if let peer { peersBeforeHello[key] = peer }
        var bundleId: String?
        do {
            try await serve(channel, connection: connection, peer: peer, key: key, bundleId: &bundleId)
        } catch let error as LineFrameDecoder.LineTooLong {
            // The line decoder gives up on a line longer than it takes; before hello that is the
            // handshake's end too. (Other errors, a reset by an app that died, are the launch's own.)
            if bundleId == nil, peersBeforeHello[key] != nil {
                peersBeforeHello[key] = nil
                handshakeFailed(error.description, peer: peer, claimedBundleId: nil)
            }
        } catch {}
        peersBeforeHello[key] = nil
        connection.close()
        if let bundleId, apps[bundleId]?.connection === connection { apps[bundleId]?.connection = nil }
    }

    private func serve(
        _ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, connection: AppConnection, peer: pid_t?,
        key: ObjectIdentifier, bundleId: inout String?
    ) async throws {
        let tap = configuration.recorder.map { TranscriptTap(recorder: $0, device: configuration.recordedName) }
        try await channel.executeThenClose { inbound, outbound in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask {
                    for await line in connection.outgoing {
                        tap?.record(.device, line)
                        try await outbound.write(line)
                    }
                }
                // Closing the outbox lets the writer send what is queued (a refusal, say), then end.
                defer { connection.close() }
                for try await line in inbound {
                    tap?.record(.app, line)
                    let message: RPCMessage
                    switch RPCLine.parse(line.readableBytesView) {
                    case .success(let parsed):
                        message = parsed
                    case .failure(let unreadable):
                        connection.send(line: unreadable.encodedLine())
                        guard bundleId != nil else {
                            peersBeforeHello[key] = nil
                            handshakeFailed(unreadable.error.message, peer: peer, claimedBundleId: nil)
                            return
                        }
                        continue
                    }
                    if message.isResponse, bundleId != nil {
                        connection.complete(message)
                    } else if let bound = bundleId {
                        if let response = await handle(message, from: bound) { connection.send(response) }
                    } else {
                        switch hello(message, connection: connection) {
                        case .accepted(let app, let response):
                            peersBeforeHello[key] = nil
                            if let response { connection.send(response) }
                            bundleId = app
                            tap?.named(app)
                            flushHeld(app)
                        case .refused(let response, let claimedBundleId):
                            peersBeforeHello[key] = nil
                            connection.send(response)
                            handshakeFailed(response.error?.message ?? "", peer: peer, claimedBundleId: claimedBundleId)
                            return
                        }
                    }
                }
            }
        }
    }

    private enum HelloOutcome {
        case accepted(String, RPCMessage?)
        /// The device's refusal, and the bundle id the app gave, if it gave one.
        case refused(RPCMessage, claimedBundleId: String?)
    }

    private func hello(_ message: RPCMessage, connection: AppConnection) -> HelloOutcome {
        guard message.method == DeviceMethod.hello, let id = message.id else {
            let what = message.method.map { "'\($0)'" + (message.id == nil ? " without an id" : "") } ?? "a response"
            return .refused(
                .failure(id: message.id, .invalidRequest("the first message must be a 'hello' request, not \(what)")),
                claimedBundleId: nil)
        }
        let claimed = message.params?["bundleId"]?.stringValue
        guard let params = try? message.decodeParams(HelloParams.self) else {
            return .refused(
                .failure(id: id, .invalidParams("hello needs protocolVersion, bundleId and pid")),
                claimedBundleId: claimed)
        }
        guard params.protocolVersion == DeviceMethod.protocolVersion else {
            return .refused(
                .failure(
                    id: id,
                    .invalidRequest(
                        "protocol version \(params.protocolVersion) is not supported; this device speaks \(DeviceMethod.protocolVersion)"
                    )), claimedBundleId: claimed)
        }
        // An app started through a wrapper (`sh -c`, an interpreter's launcher) is the launched
        // process's child: its own pid is accepted too.
        guard var record = apps[params.bundleId], let process = record.process,
            PeerProcess.isProcess(params.pid, orDescendantOf: process.pid), case .launching(let reason) = record.state
        else {
            let launched = apps[params.bundleId]?.process.map { " (the device launched it as pid \($0.pid))" } ?? ""
            return .refused(
                .failure(
                    id: id,
                    .refused("no launch of \(params.bundleId) with pid \(params.pid) is waiting for it\(launched)")),
                claimedBundleId: claimed)
        }
        record.connection = connection
        let launchPush = pushes.takeLaunchPush(params.bundleId)
        let waiter = record.launchWaiter
        record.launchWaiter = nil
        apps[params.bundleId] = record
        let state = move(params.bundleId, .connected) ?? .background
        if reason.startsInForeground { sessions.resetRateLimiter(params.bundleId) }
        publish(.appConnected, ["bundleId": params.bundleId, "pid": "\(params.pid)", "reason": reason.rawValue])
        if let launchPush {
            publish(
                .pushDelivered,
                ["bundleId": params.bundleId, "completionId": "\(launchPush.completionId)", "wake": "launched"])
        }
        let result = HelloResult(
            protocolVersion: DeviceMethod.protocolVersion, launchReason: reason.rawValue,
            applicationState: state == .active ? "active" : "background", container: record.container.paths,
            badge: notifications.badge(of: params.bundleId), remoteNotification: launchPush,
            backgroundPushSeconds: Self.seconds(configuration.backgroundPushBudget) * configuration.timeScale,
            timeScale: configuration.timeScale)
        waiter?.resume()
        return .accepted(params.bundleId, try? .response(id: id, result))
    }

    /// The device refused a connection's handshake: the launch it belongs to fails with the device's
    /// reason as soon as the app has exited (it has heard the refusal and the socket closing), or after
    /// `refusedLaunchGrace` if it does not exit, when it is killed; never only at `launchTimeout`.
    private func handshakeFailed(_ reason: String, peer: pid_t?, claimedBundleId: String?) {
        let bundleId = launchingApp(peer: peer, claimedBundleId: claimedBundleId)
        var attributes: EventAttributes = ["bundleId": bundleId ?? "unknown", "reason": reason]
        if let peer { attributes["pid"] = "\(peer)" }
        publish(.appHandshakeFailed, attributes)
        guard let bundleId, apps[bundleId]?.launchWaiter != nil, let pid = apps[bundleId]?.process?.pid else { return }
        refusedHandshakes[bundleId] = reason
        let grace = Self.refusedLaunchGrace
        work.start {
            await pause(for: grace)
            await self.endRefusedLaunch(bundleId, pid: pid)
        }
    }

    /// How long an app whose handshake was refused has to exit before it is killed.
    static let refusedLaunchGrace: Duration = .seconds(2)

    private func endRefusedLaunch(_ bundleId: String, pid: pid_t) {
        guard apps[bundleId]?.process?.pid == pid, let waiter = apps[bundleId]?.launchWaiter,
            let reason = refusedHandshakes.removeValue(forKey: bundleId)
        else { return }
        apps[bundleId]?.launchWaiter = nil
        waiter.resume(throwing: launchFailure(bundleId, Self.refusal(reason)))
        kill(bundleId, cause: .exited)
    }

    static func refusal(_ reason: String) -> String {
        "connected to the device socket, but the device refused its handshake: \(reason)"
    }

    /// The launch a connection belongs to: the app whose process (or one of its children) connected;
    /// where the platform cannot say who connected, the one its hello named, else the only app launching.
    func launchingApp(peer: pid_t?, claimedBundleId: String?) -> String? {
        let launching = apps.compactMap { bundleId, record -> (String, pid_t)? in
            guard case .launching = record.state, let process = record.process else { return nil }
            return (bundleId, process.pid)
        }
        if let peer {
            // The socket says who connected: a process outside every launch is a stray, not an app.
            return launching.first { PeerProcess.isProcess(peer, orDescendantOf: $0.1) }?.0
        }
        if let claimedBundleId, launching.contains(where: { $0.0 == claimedBundleId }) { return claimedBundleId }
        return launching.count == 1 ? launching[0].0 : nil
    }

    /// Whether a process of the launch `pid` has connected and not yet said hello.
    func hasConnectedWithoutHello(_ pid: pid_t) -> Bool {
        peersBeforeHello.values.contains { PeerProcess.isProcess($0, orDescendantOf: pid) }
    }

    /// Hands the app what waited for it to run: pushes that arrived during launch, the sessions a
    /// background relaunch was for, and the held events of sessions it has created.
    func flushHeld(_ bundleId: String) {
        guard let record = apps[bundleId], let connection = record.connection else { return }
        for push in pushes.takeArrivedDuringLaunch(bundleId) {
            connection.notify(DeviceMethod.didReceiveRemoteNotification, push)
            publish(.pushDelivered, ["bundleId": bundleId, "completionId": "\(push.completionId)", "wake": "launched"])
        }
        announceSessionsAfterLaunch(bundleId)
        deliverPendingResponse(bundleId)
        if let fetch = pushes.takeLaunchFetch(bundleId) {
            startFetch(bundleId, completionId: fetch, wake: "launched")
        }
        if record.state.isForeground, pushes.hasHeld(bundleId) {
            work.start { await self.releaseHeldPush(bundleId, on: .userOpenedApp) }
        }
        for session in sessions.createdSessions(of: bundleId) { deliverHeldEvents(bundleId, session: session) }
    }

    private func handle(_ message: RPCMessage, from bundleId: String) async -> RPCMessage? {
        guard let method = message.method else { return nil }
        do {
            let result: any Encodable & Sendable
            switch method {
            case DeviceMethod.registerForRemoteNotifications:
                result = RegisterResult(deviceToken: try await registerForRemoteNotifications(bundleId))
            case DeviceMethod.fetchCompletion:
                let params = try message.decodeParams(FetchCompletionParams.self)
                guard ["newData", "noData", "failed"].contains(params.result) else {
                    throw RPCError.invalidParams("result must be newData, noData or failed, not '\(params.result)'")
                }
                try fetchCompleted(bundleId, params)
                result = Empty()
            case DeviceMethod.localNotificationAdd:
                presentLocalNotification(bundleId, try message.decodeParams(LocalNotificationParams.self))
                result = Empty()
            case DeviceMethod.notificationAdd:
                try addNotificationRequest(bundleId, try message.decodeParams(NotificationRequestParams.self))
                result = Empty()
            case DeviceMethod.notificationRemovePending:
                removePendingNotifications(bundleId, try message.decodeParams(RemovePendingNotificationsParams.self))
                result = Empty()
            case DeviceMethod.sessionCreate:
                try await createSession(bundleId, try message.decodeParams(SessionCreateParams.self))
                result = Empty()
            case DeviceMethod.backgroundEventsCompletion:
                try backgroundEventsCompleted(bundleId, try message.decodeParams(BackgroundEventsCompletionParams.self))
                result = Empty()
            case DeviceMethod.downloadTaskCancel:
                let params = try message.decodeParams(CancelTaskParams.self)
                result = CancelTaskResult(resumeData: try await transferDaemon.cancel(bundleId: bundleId, params))
            case DeviceMethod.downloadTaskResume:
                try await resumeDownload(bundleId, try message.decodeParams(DownloadTaskParams.self))
                result = Empty()
            case DeviceMethod.backgroundTaskBegin:
                try beginBackgroundTask(bundleId, try message.decodeParams(BackgroundTaskParams.self))
                result = Empty()
            case DeviceMethod.backgroundTaskEnd:
                try endBackgroundTask(bundleId, try message.decodeParams(BackgroundTaskParams.self))
                result = Empty()
            case DeviceMethod.setMinimumBackgroundFetchInterval:
                let params = try message.decodeParams(BackgroundFetchIntervalParams.self)
                pushes.setFetchInterval(try params.interval(), for: bundleId)
                result = Empty()
            case DeviceMethod.uiState:
                let params = try message.decodeParams(UIStateParams.self)
                var attributes: EventAttributes = ["bundleId": bundleId]
                attributes["screen"] = params.screen
                attributes["title"] = params.title
                attributes["button"] = params.button
                attributes["playbackURL"] = params.playbackURL
                publish(.appUI, attributes)
                return nil
            case DeviceMethod.log:
                let params = try message.decodeParams(LogParams.self)
                publish(.appLog, ["bundleId": bundleId, "message": params.message])
                return nil
            default:
                throw RPCError.methodNotFound(method)
            }
            guard let id = message.id else { return nil }
            return try RPCMessage.response(id: id, AnyEncodable(result))
        } catch let error as RPCError {
            return message.id.map { .failure(id: $0, error) }
        } catch let error as DecodingError {
            return message.id.map { .failure(id: $0, .invalidParams("\(method): \(error)")) }
        } catch {
            return message.id.map { .failure(id: $0, .refused("\(error)")) }
        }
    }

    private func registerForRemoteNotifications(_ bundleId: String) async throws -> String {
        if let token = apps[bundleId]?.deviceToken { return token }
        let token = try await pushRegistry.registerDevice(topic: bundleId) { push in
            await self.receive(push, for: bundleId)
        }
        apps[bundleId]?.deviceToken = token
        publish(.appRegisteredForPush, ["bundleId": bundleId, "deviceToken": token])
        return token
    }
}

/// Lets a `switch` pick the result type per method and still encode it.
private struct AnyEncodable: Encodable, Sendable {
    let value: any Encodable & Sendable
    init(_ value: any Encodable & Sendable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

extension DeviceSimulator {
    /// A duration as seconds, for a message.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
