import Foundation
import HTTPServiceSupport
import HTTPTypes
import HarnessTimeline
import Hummingbird
import Logging
import Toxics

/// Toxiproxy's HTTP API over a ``FaultProxy``: the same paths, JSON, status codes and error texts, so
/// that Toxiproxy's clients (toxiproxy-python, toxiproxy-cli, the Go client, testcontainers) drive it
/// unchanged. Listens on 8474 by default, as Toxiproxy does.
public enum ToxiproxyAPI {
    /// The version `GET /version` reports: the Toxiproxy API this follows, marked as ours.
    public static let version = "2.12.0-pushharness"
    /// Request bodies beyond this are refused: a proxy or a toxic is a few hundred bytes.
    public static let maximumBody = 1 << 20

    /// The listener serving the API for `proxy`.
    public static func listener(
        proxy: FaultProxy, host: String, port: Int, timeline: Timeline, limits: HTTPLimits = HTTPLimits(),
        logger: Logger
    ) -> HTTPListener {
        HTTPListener(
            router: router(proxy), host: host, port: port, service: "proxy.api", setting: ("proxy", "apiPort"),
            timeline: timeline, limits: limits, logger: logger)
    }

    static func router(_ proxy: FaultProxy) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ToxiproxyManners())
        router.get("version") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json;charset=utf-8"
            return Response(
                status: .ok, headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: "{\"version\": \"\(version)\"}\n")))
        }
        router.post("reset") { _, _ in
            await proxy.reset()
            return Response(status: .noContent)
        }
        router.get("proxies") { _, _ in
            let body = await proxy.all().map { "\(Toxic.quoted($0.name)):\($0.json)" }.joined(separator: ",")
            return json("{\(body)}")
        }
        router.post("proxies") { request, context in
            try await answer(.created) { try await proxy.create(from: body(request, context)).json }
        }
        router.post("populate") { request, context in
            let (made, error) = await proxy.populate(from: try await body(request, context))
            // Go writes a nil slice as null: what Toxiproxy answers when it refused the array whole.
            let proxies = "\"proxies\":" + (made.map { "[\($0.map(\.json).joined(separator: ","))]" } ?? "null")
            guard let error else { return json("{\(proxies)}", status: .created) }
            return json(
                "{\"error\":\(Toxic.quoted(error.message)),\"status\":\(error.status),\(proxies)}",
                status: HTTPResponse.Status(code: error.status))
        }
        router.get("proxies/:proxy") { _, context in
            let name = parameter("proxy", context)
            return try await answer { try await proxy.proxy(name).json }
        }
        for method in [HTTPRequest.Method.post, .patch] {
            router.on("proxies/:proxy", method: method) { request, context in
                let name = parameter("proxy", context)
                return try await answer { try await proxy.update(name, from: body(request, context)).json }
            }
            router.on("proxies/:proxy/toxics/:toxic", method: method) { request, context in
                let name = parameter("proxy", context)
                let toxic = parameter("toxic", context)
                return try await answer {
                    try await proxy.updateToxic(toxic, of: name, from: body(request, context)).json
                }
            }
        }
        router.delete("proxies/:proxy") { _, context in
            let name = parameter("proxy", context)
            return try await answer(.noContent) {
                try await proxy.delete(name)
                return ""
            }
        }
        router.get("proxies/:proxy/toxics") { _, context in
            let name = parameter("proxy", context)
            return try await answer { "[\(try await proxy.toxics(of: name).map(\.json).joined(separator: ","))]" }
        }
        router.post("proxies/:proxy/toxics") { request, context in
            let name = parameter("proxy", context)
            return try await answer { try await proxy.addToxic(to: name, from: body(request, context)).json }
        }
        router.get("proxies/:proxy/toxics/:toxic") { _, context in
            let name = parameter("proxy", context)
            let toxic = parameter("toxic", context)
            return try await answer { try await proxy.toxic(toxic, of: name).json }
        }
        router.delete("proxies/:proxy/toxics/:toxic") { _, context in
            let name = parameter("proxy", context)
            let toxic = parameter("toxic", context)
            return try await answer(.noContent) {
                try await proxy.removeToxic(toxic, of: name)
                return ""
            }
        }
        return router
    }

    /// A name in the path, percent-decoding undone (`/proxies/a%3Ab` names `a:b`); names are refused at
    /// creation unless they reach their proxy written as they are too (``ProxyRules/nameProblem(_:)``).
    private static func parameter(_ key: String, _ context: BasicRequestContext) -> String {
        let raw = context.parameters.get(key) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private static func body(_ request: Request, _ context: BasicRequestContext) async throws -> Data {
        Data(try await request.body.collect(upTo: maximumBody).readableBytesView)
    }

    /// The JSON `make` returns with `status`, or the error it throws as Toxiproxy sends errors.
    private static func answer(
        _ status: HTTPResponse.Status = .ok, _ make: () async throws -> String
    ) async throws -> Response {
        do {
            let text = try await make()
            return status == .noContent ? Response(status: .noContent) : json(text, status: status)
        } catch let error as ToxiproxyError {
            return failure(error)
        }
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// An error as Go's `http.Error` writes Toxiproxy's: plain text holding the JSON, a newline after.
    static func failure(_ error: ToxiproxyError) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(
            status: HTTPResponse.Status(code: error.status), headers: headers,
            body: .init(byteBuffer: ByteBuffer(string: error.body)))
    }
}

/// What Toxiproxy's router does around every route: browsers are turned away (`User agent not allowed`,
/// a guard against cross-site requests), an unknown path gets gorilla/mux's `404 page not found`, and a
/// body too large a Toxiproxy-style 400.
struct ToxiproxyManners: RouterMiddleware {
    func handle(
        _ request: Request, context: BasicRequestContext,
        next: (Request, BasicRequestContext) async throws -> Response
    ) async throws -> Response {
        if request.headers[.userAgent]?.hasPrefix("Mozilla/") == true {
            return plain("User agent not allowed\n", status: .forbidden)
        }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            return plain("404 page not found\n", status: .notFound)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            return ToxiproxyAPI.failure(.badBody("the body is larger than \(ToxiproxyAPI.maximumBody) bytes"))
        }
    }

    private func plain(_ text: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
