import HTTPServiceSupport
import HarnessTimeline
import Hummingbird
import Logging

/// The media server's control API (plain HTTP on loopback), documented in docs/media-control-api.md.
enum MediaControlAPI {
    struct SettingsResponse: ResponseEncodable {
        var throttleBytesPerSecond: Int?
    }

    struct FaultList: ResponseEncodable {
        var faults: [MediaFaultStatus]
    }

    struct FaultAdded: ResponseEncodable {
        var id: Int
    }

    static func start(
        host: String, port: Int, settings: LockedState<MediaServerSettings>, faults: LockedState<MediaFaultPlan>,
        timeline: Timeline, logger: Logger
    ) async throws -> RunningHTTPServer {
        let router = Router()
        router.get("/faults") { _, _ in FaultList(faults: faults.withLock { $0.status }) }
        router.post("/faults") { request, context -> EditedResponse<FaultAdded> in
            let fault: MediaFault
            do {
                fault = try await request.decode(as: MediaFault.self, context: context)
            } catch {
                let kinds = MediaFault.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw HTTPError(
                    .badRequest,
                    message: #"expected {"fault": one of \#(kinds), "path": "/videos/*", "count": 1, …}: \#(error)"#)
            }
            if let problem = fault.problem { throw HTTPError(.badRequest, message: problem) }
            let id = faults.withLock { $0.add(fault) }
            timeline.publish("media.fault.added", source: "media", ["id": "\(id)", "fault": fault.fault.rawValue, "path": fault.path ?? "*"])
            return EditedResponse(status: .created, response: FaultAdded(id: id))
        }
        router.delete("/faults/:id") { _, context -> HTTPResponse.Status in
            guard let id = context.parameters.get("id", as: Int.self), faults.withLock({ $0.remove(id: id) }) else {
                throw HTTPError(.notFound, message: "no fault rule with that id")
            }
            return .noContent
        }
        router.delete("/faults") { _, _ -> HTTPResponse.Status in
            faults.withLock { $0.removeAll() }
            return .noContent
        }
        router.get("/settings") { _, _ in
            SettingsResponse(throttleBytesPerSecond: settings.withLock { $0.throttleBytesPerSecond })
        }
        router.put("/settings") { request, context -> SettingsResponse in
            let update: MediaServerSettings
            do {
                update = try await request.decode(as: MediaServerSettings.self, context: context)
            } catch {
                throw HTTPError(.badRequest, message: #"expected {"throttleBytesPerSecond": <positive integer or null>}"#)
            }
            if let rate = update.throttleBytesPerSecond, rate <= 0 {
                throw HTTPError(.badRequest, message: "throttleBytesPerSecond must be positive, or null for no limit")
            }
            settings.withLock { $0 = update }
            timeline.publish(
                "media.settings.changed", source: "media",
                ["throttle": update.throttleBytesPerSecond.map { "\($0) B/s" } ?? "none"])
            return SettingsResponse(throttleBytesPerSecond: update.throttleBytesPerSecond)
        }
        return try await RunningHTTPServer.start(router: router, host: host, port: port, logger: logger)
    }
}
