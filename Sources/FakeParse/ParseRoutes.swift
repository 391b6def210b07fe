import Foundation
import HTTPTypes
import HarnessTimeline
import Hummingbird

/// The REST routes, with Parse Server's authentication rules: the application id always, a client or
/// REST key when one is configured, the master key for queries, pushes and `_PushStatus`.
struct ParseRoutes: Sendable {
    let configuration: FakeParseConfiguration
    let store: ParseStore
    let pushes: PushSender
    let timeline: Timeline

    func register(on router: RouterGroup<BasicRequestContext>) {
        router.get("health") { _, _ in json(["status": "ok"]) }
        for path in ["installations", "classes/_Installation"] {
            router.post(RouterPath(stringLiteral: path)) { request, context in
                try await saveInstallation(request, context)
            }
            router.get(RouterPath(stringLiteral: path)) { request, _ in
                try authorize(request, master: true)
                return json(["results": try store.installations()])
            }
        }
        router.post("push") { request, context in try await push(request, context) }
        router.get("classes/_PushStatus") { request, _ in
            try authorize(request, master: true)
            return json(["results": try store.pushStatuses()])
        }
    }

    private func authorize(_ request: Request, master: Bool) throws {
        guard request.headers[.parseApplicationId] == configuration.applicationId else { throw ParseError.unauthorized }
        let isMaster = request.headers[.parseMasterKey] == configuration.masterKey
        if master {
            guard isMaster else { throw ParseError.masterKeyRequired }
            return
        }
        let clientKeys = [configuration.clientKey, configuration.restAPIKey].compactMap { $0 }
        guard clientKeys.isEmpty || isMaster else {
            let offered = [request.headers[.parseClientKey], request.headers[.parseRESTAPIKey]].compactMap { $0 }
            guard offered.contains(where: clientKeys.contains) else { throw ParseError.unauthorized }
            return
        }
    }

    private func body(_ request: Request, _ context: BasicRequestContext) async throws -> ([String: Any], String) {
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let data = Data(buffer.readableBytesView)
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ParseError.invalidJSON("the body must be a JSON object")
        }
        return (object, String(decoding: data, as: UTF8.self))
    }

    private func saveInstallation(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, master: false)
        var (fields, _) = try await body(request, context)
        if var token = fields["deviceToken"] as? String {
            if token.count == 64 { token = token.lowercased() }
            fields["deviceToken"] = token
        }
        if let id = fields["installationId"] as? String {
            fields["installationId"] = id.lowercased()
        } else if let header = request.headers[.parseInstallationId] {
            fields["installationId"] = header.lowercased()
        }
        guard fields["deviceToken"] != nil || fields["installationId"] != nil else {
            throw ParseError.missingInstallationId
        }
        if let badge = fields["badge"], !(badge is NSNull) {
            fields["badge"] = try Self.badge(badge)
        }
        let saved = try store.saveInstallation(fields)
        timeline.publish(
            .parseInstallationSaved, source: "parse",
            [
                "objectId": saved.objectId, "created": "\(saved.created)",
                "deviceToken": fields["deviceToken"] as? String ?? "",
                "appIdentifier": fields["appIdentifier"] as? String ?? "",
                "deviceType": fields["deviceType"] as? String ?? "",
            ])
        if saved.created {
            var response = json(["objectId": saved.objectId, "createdAt": saved.createdAt], status: .created)
            response.headers[.location] = "\(request.uri.path)/\(saved.objectId)"
            return response
        }
        return json(["updatedAt": saved.updatedAt])
    }

    /// An installation's badge: a whole number in the range iOS shows (0 to 2,147,483,647), so that an
    /// `Increment` push has a number to add to. (`null` clears it; operations such as
    /// `{"__op": "Increment"}` are not applied to installations here, so they are refused too.)
    static func badge(_ value: Any) throws -> Int {
        let range = InputBounds.badge
        // JSONSerialization gives true and false as NSNumbers whose type is `c` (a char); numbers never are.
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
            throw ParseError(
                httpStatus: .badRequest, code: 111, message: "schema mismatch for _Installation.badge; expected Number")
        }
        let double = number.doubleValue
        guard double.rounded() == double, double >= Double(range.lowerBound), double <= Double(range.upperBound) else {
            throw ParseError(
                httpStatus: .badRequest, code: 111,
                message: "badge must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(number)")
        }
        return Int(double)
    }

    private func push(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, master: true)
        let (object, raw) = try await body(request, context)
        let channels = object["channels"] as? [Any]
        let whereQuery = object["where"] as? [String: Any]
        if channels != nil, whereQuery != nil {
            throw ParseError.pushMisconfigured("Channels and query can not be set at the same time.")
        }
        guard channels != nil || whereQuery != nil else {
            throw ParseError.pushMisconfigured(#"Sending a push requires either "channels" or a "where" query."#)
        }
        guard let data = object["data"] as? [String: Any] else {
            throw ParseError.pushMisconfigured("A push needs a 'data' object.")
        }
        let constraints = whereQuery ?? ["channels": ["$in": channels ?? []]]
        let expiration = try Self.expiration(object)
        let statusId = try pushes.start(
            query: InstallationQuery(constraints: constraints), data: data, expiration: expiration, rawBody: raw)
        var response = json(["result": true])
        response.headers[.parsePushStatusId] = statusId
        return response
    }
}

extension ParseRoutes {
    /// The longest `expiration_interval` taken: ten years, far past anything APNs keeps.
    static let longestExpirationInterval = 315_360_000

    /// `expiration_time` (epoch seconds or an ISO date) or `expiration_interval` (seconds from now), as
    /// APNs's `apns-expiration`.
    static func expiration(_ body: [String: Any]) throws -> Int? {
        let time = body["expiration_time"]
        let interval = body["expiration_interval"]
        if time != nil, interval != nil {
            throw ParseError.pushMisconfigured("Both expiration_time and expiration_interval cannot be set")
        }
        if let interval {
            guard let seconds = (interval as? NSNumber)?.doubleValue, seconds > 0 else {
                throw ParseError.pushMisconfigured("expiration_interval must be a number greater than 0")
            }
            guard seconds <= Double(longestExpirationInterval) else {
                throw ParseError.pushMisconfigured(
                    "expiration_interval must be at most \(longestExpirationInterval) seconds (ten years), not \(seconds)"
                )
            }
            return Int((Date().timeIntervalSince1970 + seconds).rounded(.up))
        }
        switch time {
        case nil: return nil
        case let number as NSNumber:
            let seconds = number.doubleValue
            guard seconds.isFinite, seconds.rounded(.down) >= Double(InputBounds.epochSeconds.lowerBound),
                seconds <= Double(InputBounds.epochSeconds.upperBound)
            else {
                throw ParseError.pushMisconfigured(
                    "expiration_time must be epoch seconds from 0 to \(InputBounds.epochSeconds.upperBound), not \(number)"
                )
            }
            return Int(seconds)
        case let text as String:
            guard let seconds = ISODate.epochSeconds(text) else {
                throw ParseError.pushMisconfigured("\(text) is not valid time.")
            }
            guard InputBounds.epochSeconds.contains(seconds) else {
                throw ParseError.pushMisconfigured("expiration_time must be from 1970 to 9999, not \(text)")
            }
            return seconds
        default:
            throw ParseError.pushMisconfigured("\(String(describing: time)) is not valid time.")
        }
    }
}

private func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    return Response(
        status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

extension HTTPField.Name {
    static let parseApplicationId = Self("X-Parse-Application-Id")!
    static let parseMasterKey = Self("X-Parse-Master-Key")!
    static let parseClientKey = Self("X-Parse-Client-Key")!
    static let parseRESTAPIKey = Self("X-Parse-REST-API-Key")!
    static let parseInstallationId = Self("X-Parse-Installation-Id")!
    static let parsePushStatusId = Self("X-Parse-Push-Status-Id")!
}
