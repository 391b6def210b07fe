import DeviceProtocol
import Foundation
import HTTPTypes
import HarnessTimeline
import Hummingbird
import ParseModel

/// Parse Server's REST surface below `/parse`: every method and path goes through one handler, which
/// reads the call as a ``ParseRequest`` (method override, keys in headers or body), checks the keys and
/// answers from the store. Every refusal is Parse's error shape with its code and text; nothing a client
/// sends ends in a 500 except a failing disk.
struct ParseRoutes: Sendable {
    let configuration: FakeParseConfiguration
    let store: ParseStore
    let pushes: PushSender
    let timeline: Timeline

    /// The largest body read, as Parse Server's default `maxUploadSize` ("20mb").
    static let largestBody = 20 * 1024 * 1024
    static let tooLarge = ParseFailure(status: 413, "request entity too large")

    var keyring: ParseKeyring {
        ParseKeyring(
            applicationId: configuration.applicationId, masterKey: configuration.masterKey,
            clientKeys: [configuration.clientKey, configuration.restAPIKey].compactMap { $0 })
    }

    func register(on router: Router<BasicRequestContext>) {
        for method in [HTTPRequest.Method.get, .post, .put, .delete] {
            router.on("parse/**", method: method) { request, _ in await respond(request) }
        }
        // A browser's preflight is answered before any key is read, as Parse Server's allowCrossDomain does.
        router.on("parse/**", method: .options) { _, _ in
            var fields: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
            ParseReply.addCrossOrigin(to: &fields)
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: "OK")))
        }
    }

    func respond(_ request: Request) async -> Response {
        let reply: ParseReply
        do {
            let parseRequest = try await read(request)
            reply = try await dispatch(parseRequest)
        } catch let failure as ParseFailure {
            reply = ParseReply(failure)
        } catch {
            reply = ParseReply(status: 500, body: ["code": 1, "message": "Internal server error."])
        }
        return reply.response
    }

    private func read(_ request: Request) async throws -> ParseRequest {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: Self.largestBody)
        } catch {
            throw Self.tooLarge
        }
        let body = buffer.readableBytes == 0 ? nil : try ParseJSON.decode(Data(buffer.readableBytesView))
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        // HTTP/1.1's Host arrives as the request's authority, not among its fields.
        if let authority = request.head.authority { headers["host"] = authority }
        let query = ParseRequest.formDecoded(request.uri.query ?? "")
        let path = request.uri.path.split(separator: "/").dropFirst().map(String.init)
        return try ParseRequest(
            method: request.method.rawValue, path: path, headers: headers, query: query, body: body)
    }

    /// Answers one call (and each of a batch's).
    func dispatch(_ request: ParseRequest) async throws(ParseFailure) -> ParseReply {
        if request.route == .health { return ParseReply(body: ["status": "ok"]) }
        let isMaster = try keyring.access(request.credentials) == .master
        switch request.route {
        case .health:
            return ParseReply(body: ["status": "ok"])  // answered above, without keys
        case .serverInfo:
            guard isMaster else { throw .masterKeyRequired }
            return ParseReply(body: Self.serverInfo)
        case .find(let parseClass):
            guard isMaster else { throw .forbidden("find", on: parseClass.collectionName) }
            let options = try FindOptions(parameters: request.fields)
            let (results, count) = try store.find(parseClass, options)
            var body: [String: JSONValue] = ["results": .array(results.map(JSONValue.object))]
            if let count { body["count"] = .number(Double(count)) }
            return ParseReply(body: .object(body))
        case .get(let parseClass, let id):
            if parseClass != .installation, !isMaster { throw .forbidden("get", on: parseClass.collectionName) }
            let options = try FindOptions.forGet(parameters: request.fields)
            guard let object = store.get(parseClass, id) else { throw .objectNotFound }
            return ParseReply(body: .object(options.project(object)))
        case .create(.installation):
            return try await save(request, objectId: nil, isMaster: isMaster)
        case .update(.installation, let id):
            return try await save(request, objectId: id, isMaster: isMaster)
        case .delete(let parseClass, let id):
            guard isMaster else { throw .forbidden("delete", on: parseClass.collectionName) }
            let deleted: Bool
            do {
                deleted = try await store.delete(parseClass, id)
            } catch {
                throw ParseFailure(code: 1, "the database refused the delete: \(error)")
            }
            guard deleted else { throw .objectNotFound }
            return ParseReply(body: [:])
        case .create(let parseClass), .update(let parseClass, _):
            let operation = request.method == .post ? "create" : "update"
            guard isMaster else { throw .forbidden(operation, on: parseClass.collectionName) }
            throw ParseFailure(
                code: 119, "FakeParse writes \(parseClass.rawValue) itself; POST /parse/push makes a push and its rows")
        case .push:
            guard isMaster else { throw .masterKeyRequired }
            return try await push(request)
        case .batch:
            return try await batch(request)
        }
    }

    private func save(_ request: ParseRequest, objectId: String?, isMaster: Bool) async throws(ParseFailure)
        -> ParseReply
    {
        if objectId == nil, request.fields["objectId"] != nil {
            throw ParseFailure(code: 105, "objectId is an invalid field name.")
        }
        let write = try InstallationWrite(
            objectId: objectId, data: request.fields, headerInstallationId: request.credentials.installationId,
            isMaster: isMaster)
        let changes = try ObjectChanges(body: write.data)
        let written = try await store.write(write, changes)
        let object = written.object
        timeline.publish(
            .parseInstallationSaved, source: "parse",
            [
                "objectId": object["objectId"]?.stringValue ?? "", "created": "\(written.created)",
                "deviceToken": object["deviceToken"]?.stringValue ?? "",
                "appIdentifier": object["appIdentifier"]?.stringValue ?? "",
                "deviceType": object["deviceType"]?.stringValue ?? "",
            ])
        var body = written.results
        guard written.created, let id = object["objectId"]?.stringValue else {
            body["updatedAt"] = object["updatedAt"]
            return ParseReply(body: .object(body))
        }
        body["objectId"] = .string(id)
        body["createdAt"] = object["createdAt"]
        let host = request.host ?? "\(configuration.host):\(configuration.port)"
        return ParseReply(
            status: 201, body: .object(body),
            headers: [("Location", "http://\(host)/parse/classes/_Installation/\(id)")])
    }

    private func push(_ request: ParseRequest) async throws(ParseFailure) -> ParseReply {
        let statusId = try await pushes.start(body: request.fields)
        return ParseReply(body: ["result": true], headers: [("X-Parse-Push-Status-Id", statusId)])
    }

    /// `/batch`: every request is routed first (one that cannot be fails the whole batch, as in Parse
    /// Server), then each runs in turn with the batch's keys and is answered `{"success": …}` or
    /// `{"error": {"code", "error"}}`.
    private func batch(_ request: ParseRequest) async throws(ParseFailure) -> ParseReply {
        guard case .array(let items)? = request.fields["requests"] else {
            throw .invalidJSON("requests must be an array")
        }
        var requests: [ParseRequest] = []
        for item in items { requests.append(try subrequest(item, of: request)) }
        var answers: [JSONValue] = []
        for inner in requests {
            do {
                answers.append(["success": try await dispatch(inner).body])
            } catch {
                answers.append(["error": error.body])
            }
        }
        return ParseReply(body: .array(answers))
    }

    private func subrequest(_ item: JSONValue, of batch: ParseRequest) throws(ParseFailure) -> ParseRequest {
        guard case .string(let path)? = item["path"] else { throw .invalidJSON("batch request path must be a string") }
        let method = item["method"]?.stringValue ?? ""
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard components.count > 2, components[0].isEmpty, components[1] == "parse" else {
            throw .invalidJSON("cannot route batch path \(path)")
        }
        components = components.dropFirst(2).filter { !$0.isEmpty }
        if components == ["batch"] { throw .invalidJSON("nested batch requests are not allowed") }
        do {
            var inner = try ParseRequest(
                method: method, path: components, headers: [:], query: [:], body: item["body"] ?? .object([:]))
            inner.credentials = batch.credentials
            return inner
        } catch  where error.code == nil {
            throw .invalidJSON("cannot route \(method) /\(components.joined(separator: "/"))")
        }
    }

    static let serverInfo: JSONValue = [
        "parseServerVersion": "7.4.0 (FakeParse)",
        "features": [
            "push": [
                "immediatePush": true, "scheduledPush": true, "storedPushData": true, "pushAudiences": false,
                "localization": false,
            ]
        ],
    ]
}

/// One answer: status, JSON body and extra headers.
struct ParseReply: Sendable {
    var status = 200
    var body: JSONValue
    var headers: [(String, String)] = []

    init(status: Int = 200, body: JSONValue, headers: [(String, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    init(_ failure: ParseFailure) {
        self.init(status: failure.status, body: failure.body)
    }

    var response: Response {
        var fields: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        Self.addCrossOrigin(to: &fields)
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields,
            body: .init(byteBuffer: ByteBuffer(string: ParseJSON.text(body))))
    }

    /// Parse Server's `allowCrossDomain` with its defaults, on every answer below `/parse`: a page from
    /// any origin may call, with Parse's headers, and read the push status id.
    static func addCrossOrigin(to fields: inout HTTPFields) {
        for (name, value) in ParseCrossOrigin.headers {
            if let name = HTTPField.Name(name) { fields[name] = value }
        }
    }
}
