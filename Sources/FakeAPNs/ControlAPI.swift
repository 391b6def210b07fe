import Foundation
import HTTPServiceSupport
import Hummingbird
import Logging

/// FakeAPNs's inspection and control API (plain HTTP on loopback), documented in docs/apns-control-api.md:
/// register devices, list what was decided.
public final class ControlAPI: Sendable {
    public let port: Int
    private let server: RunningHTTPServer

    private init(server: RunningHTTPServer) {
        self.server = server
        self.port = server.port
    }

    struct RegisterRequest: Decodable {
        var topic: String
        var environment: String?
    }

    struct RegisterResponse: ResponseEncodable {
        var deviceToken: String
    }

    struct NotificationList: ResponseEncodable {
        var results: [NotificationLog.Entry]
    }

    static func start(host: String, port: Int, gateway: DeviceGateway, log: NotificationLog, logger: Logger) async throws
        -> ControlAPI
    {
        let router = Router()
        router.get("/health") { _, _ in "ok" }
        router.post("/devices") { request, context -> EditedResponse<RegisterResponse> in
            let body = try await request.decode(as: RegisterRequest.self, context: context)
            let environment = body.environment ?? "sandbox"
            guard ["sandbox", "production"].contains(environment) else {
                throw HTTPError(.badRequest, message: "environment must be 'sandbox' or 'production', not '\(environment)'")
            }
            let token = gateway.register(topic: body.topic, environment: environment)
            return EditedResponse(status: .created, response: RegisterResponse(deviceToken: token))
        }
        router.get("/notifications") { request, _ -> NotificationList in
            let token = request.uri.queryParameters["deviceToken"].map(String.init)
            let entries = log.all.filter { token == nil || $0.notification?.deviceToken == token }
            return NotificationList(results: entries)
        }
        let server = try await RunningHTTPServer.start(router: router, host: host, port: port, logger: logger)
        return ControlAPI(server: server)
    }

    func stop() async { await server.stop() }
}
