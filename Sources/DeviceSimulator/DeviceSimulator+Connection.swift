import DeviceProtocol
import Foundation
import HarnessTimeline
import NIOCore

/// The device socket: the `hello` handshake and the requests an app makes of its "OS".
extension DeviceSimulator {
    func handleConnection(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let connection = AppConnection()
        var bundleId: String?
        try? await channel.executeThenClose { inbound, outbound in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask {
                    for await line in connection.outgoing { try await outbound.write(line) }
                }
                defer { connection.close() }
                for try await line in inbound {
                    guard let message = try? RPCMessage.decode(line: Data(line.readableBytesView)) else {
                        connection.send(.failure(id: nil, .invalidRequest("not a JSON-RPC 2.0 message")))
                        continue
                    }
                    if message.isResponse {
                        connection.complete(message)
                    } else if let bound = bundleId {
                        if let response = await handle(message, from: bound) { connection.send(response) }
                    } else {
                        let (app, response) = hello(message, connection: connection)
                        if let response { connection.send(response) }
                        if let app {
                            bundleId = app
                            flushHeld(app)
                        }
                    }
                }
            }
        }
        connection.close()
        if let bundleId, apps[bundleId]?.connection === connection { apps[bundleId]?.connection = nil }
    }

    private func hello(_ message: RPCMessage, connection: AppConnection) -> (String?, RPCMessage?) {
        guard message.method == DeviceMethod.hello, let id = message.id else {
            return (nil, .failure(id: message.id, .invalidRequest("the first message must be a 'hello' request")))
        }
        guard let params = try? message.decodeParams(HelloParams.self) else {
            return (nil, .failure(id: id, .invalidParams("hello needs protocolVersion, bundleId and pid")))
        }
        guard params.protocolVersion == DeviceMethod.protocolVersion else {
            return (
                nil,
                .failure(
                    id: id,
                    .invalidRequest(
                        "protocol version \(params.protocolVersion) is not supported; this device speaks \(DeviceMethod.protocolVersion)"
                    ))
            )
        }
        guard var record = apps[params.bundleId], let process = record.process, process.pid == params.pid,
            case .launching(let reason) = record.state
        else {
            return (
                nil,
                .failure(id: id, .refused("no launch of \(params.bundleId) with pid \(params.pid) is waiting for it"))
            )
        }
        record.connection = connection
        let launchPush = record.launchPush
        record.launchPush = nil
        let waiter = record.launchWaiter
        record.launchWaiter = nil
        apps[params.bundleId] = record
        let state = (try? transition(params.bundleId, .connected)) ?? .background
        if reason.startsInForeground { apps[params.bundleId]?.rateLimiter.reset() }
        publish(.appConnected, ["bundleId": params.bundleId, "pid": "\(params.pid)", "reason": reason.rawValue])
        if let launchPush {
            publish(
                .pushDelivered,
                ["bundleId": params.bundleId, "completionId": "\(launchPush.completionId)", "wake": "launched"])
        }
        let result = HelloResult(
            protocolVersion: DeviceMethod.protocolVersion, launchReason: reason.rawValue,
            applicationState: state == .active ? "active" : "background", container: record.container.paths,
            badge: record.badge, remoteNotification: launchPush)
        waiter?.resume()
        return (params.bundleId, try? .response(id: id, result))
    }

    /// Hands the app what waited for it to run: pushes that arrived during launch, the sessions a
    /// background relaunch was for, and the held events of sessions it has created.
    func flushHeld(_ bundleId: String) {
        guard let record = apps[bundleId], let connection = record.connection else { return }
        apps[bundleId]?.heldPushes.removeAll()
        for push in record.heldPushes {
            connection.notify(DeviceMethod.didReceiveRemoteNotification, push)
            publish(.pushDelivered, ["bundleId": bundleId, "completionId": "\(push.completionId)", "wake": "launched"])
        }
        announceSessionsAfterLaunch(bundleId)
        deliverPendingResponse(bundleId)
        if let fetch = record.launchFetch {
            apps[bundleId]?.launchFetch = nil
            startFetch(bundleId, completionId: fetch, wake: "launched")
        }
        if record.state.isForeground, record.heldPush != nil {
            Task { await self.releaseHeldPush(bundleId, on: .userOpenedApp) }
        }
        for session in record.createdSessions.sorted() { deliverHeldEvents(bundleId, session: session) }
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
                if let seconds = params.seconds, !(seconds >= 0) {
                    throw RPCError.invalidParams("seconds must be 0 (minimum), a positive number, or null (never)")
                }
                apps[bundleId]?.fetchInterval = params.seconds.map { .milliseconds(Int64($0 * 1000)) }
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
