import HTTPServiceSupport
import HarnessTimeline
import Hummingbird
import Logging

/// The media server's control API (plain HTTP on loopback), documented in docs/media-control-api.md.
enum MediaControlAPI {
    struct SettingsResponse: ResponseEncodable {
        var throttleBytesPerSecond: Int?
    }

    static func start(
        host: String, port: Int, settings: LockedState<MediaServerSettings>, timeline: Timeline, logger: Logger
    ) async throws -> RunningHTTPServer {
        let router = Router()
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
