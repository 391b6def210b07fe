import Foundation
import HTTPServiceSupport
import HarnessTimeline
import Hummingbird
import Logging

/// The media server's control API (plain HTTP on loopback), documented in docs/media-control-api.md.
enum MediaControlAPI {
    struct SettingsResponse: ResponseEncodable {
        var settings: MediaServerSettings

        func encode(to encoder: any Encoder) throws { try settings.encode(to: encoder) }
    }

    /// A decoding error in words a user can act on.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.typeMismatch(_, let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: return "\(error)"
        }
    }

    struct FaultList: ResponseEncodable {
        var faults: [MediaFaultStatus]
    }

    struct FaultAdded: ResponseEncodable {
        var id: Int
    }

    static func make(
        host: String, port: Int, settings: LockedState<MediaServerSettings>, faults: LockedState<MediaFaultPlan>,
        limits: HTTPLimits, timeline: Timeline, logger: Logger
    ) -> HTTPListener {
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
            let added = faults.withLock { plan -> Result<Int, HTTPError> in
                if let refusal = plan.refusal(adding: fault) {
                    return .failure(HTTPError(.badRequest, message: refusal))
                }
                return .success(plan.add(fault))
            }
            let id = try added.get()
            timeline.publish(
                "media.fault.added", source: "media",
                ["id": "\(id)", "fault": fault.fault.rawValue, "path": fault.path ?? "*"])
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
        router.get("/settings") { _, _ in SettingsResponse(settings: settings.withLock { $0 }) }
        router.put("/settings") { request, context -> SettingsResponse in
            // A partial update: the keys given change, the others stay.
            let current = settings.withLock { $0 }
            let body = try await request.body.collect(upTo: 64 * 1024)
            let update: MediaServerSettings
            do {
                update = try MediaServerSettings.decode(Data(body.readableBytesView), over: current)
            } catch {
                throw HTTPError(
                    .badRequest,
                    message:
                        #"expected {"throttleBytesPerSecond": <bytes per second or null>, "serverBytesPerSecond", "burstBytes", "firstByteDelayMilliseconds", "latencyMilliseconds"}: \#(describe(error))"#
                )
            }
            if let problem = update.problem { throw HTTPError(.badRequest, message: problem) }
            settings.withLock { $0 = update }
            timeline.publish(
                "media.settings.changed", source: "media",
                [
                    "throttle": update.throttleBytesPerSecond.map { "\($0) B/s" } ?? "none",
                    "serverThrottle": update.serverBytesPerSecond.map { "\($0) B/s" } ?? "none",
                    "latency": "\(update.latencyMilliseconds) ms",
                    "firstByteDelay": "\(update.firstByteDelayMilliseconds) ms",
                ])
            return SettingsResponse(settings: update)
        }
        return HTTPListener(
            router: router, host: host, port: port, service: "media.control", setting: ("media", "controlPort"),
            timeline: timeline, limits: limits, logger: logger)
    }
}
