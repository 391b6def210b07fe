import DeviceProtocol
import Foundation

/// One REST call as Parse Server understands it, after its middlewares: the method (a POST with
/// `_method` in its body is re-dispatched as that method, as the JS SDK, the iOS SDK and the dashboard
/// send), the keys (from headers, or from the body's `_ApplicationId`, `_MasterKey`… when no application
/// id header is sent), the parameters or body with those keys taken out, and the route.
public struct ParseRequest: Sendable {
    public enum Method: String, Sendable { case get = "GET", post = "POST", put = "PUT", delete = "DELETE" }

    public var method: Method
    public var route: ParseRoute
    public var credentials: ParseCredentials
    /// A body's fields, or a GET's parameters (each value JSON where it parses as JSON).
    public var fields: [String: JSONValue]
    /// The `Host` the client called, for the `Location` of what it creates.
    public var host: String?

    /// The body keys the JS SDK carries its keys and method in.
    static let envelopeKeys: Set<String> = [
        "_method", "_ApplicationId", "_JavaScriptKey", "_MasterKey", "_ClientKey", "_RESTAPIKey",
        "_InstallationId", "_SessionToken", "_ClientVersion", "_context", "_RevocableSession",
    ]

    public init(
        method: String, path: [String], headers: [String: String], query: [String: String],
        body: JSONValue?
    ) throws(ParseFailure) {
        guard var method = Method(rawValue: method.uppercased()) else {
            throw ParseFailure(status: 405, "\(method) is not a method Parse Server serves")
        }
        var fields: [String: JSONValue]
        switch body {
        case nil, .null?: fields = [:]
        case .object(let object)?: fields = object
        case .some(let other):
            throw .invalidJSON("the body must be a JSON object, not \(ParseValues.typeName(other) ?? "null")")
        }
        if method == .post, case .string(let override)? = fields["_method"] {
            guard let overridden = Method(rawValue: override.uppercased()) else {
                throw ParseFailure(status: 405, "\(override) is not a method Parse Server serves")
            }
            method = overridden
        }
        credentials = ParseCredentials(headers: headers, body: fields)
        host = headers["host"]
        for key in Self.envelopeKeys { fields[key] = nil }
        if method == .get || method == .delete, body == nil {
            fields = query.mapValues(Self.parameter)
        } else if method == .get {
            for (key, value) in query where fields[key] == nil { fields[key] = Self.parameter(value) }
        }
        self.method = method
        self.fields = fields
        route = try ParseRoute(method: method, path: path)
    }

    /// A query string's parameters as a browser's form encoding and Express read them: `+` is a space,
    /// `%XX` a byte; a key given twice keeps its last value.
    public static func formDecoded(_ query: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            parameters[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return parameters
    }

    /// A query-string value: JSON when it parses as JSON (`where={…}`, `count=1`), else the text.
    static func parameter(_ text: String) -> JSONValue {
        guard let data = text.data(using: .utf8), let value = try? ParseJSON.decode(data) else {
            return .string(text)
        }
        return value
    }
}

/// The keys a request carries, from its headers or, failing an application id header, its body.
public struct ParseCredentials: Sendable, Equatable {
    public var applicationId: String?
    public var masterKey: String?
    /// The client, JavaScript, .NET or REST key offered.
    public var clientKeys: [String]
    public var installationId: String?

    public init(
        applicationId: String?, masterKey: String? = nil, clientKeys: [String] = [], installationId: String? = nil
    ) {
        self.applicationId = applicationId
        self.masterKey = masterKey
        self.clientKeys = clientKeys
        self.installationId = installationId
    }

    /// `headers` with lower-cased names.
    init(headers: [String: String], body: [String: JSONValue]) {
        if let applicationId = headers["x-parse-application-id"] {
            self.init(
                applicationId: applicationId, masterKey: headers["x-parse-master-key"],
                clientKeys: [
                    "x-parse-client-key", "x-parse-javascript-key", "x-parse-windows-key", "x-parse-rest-api-key",
                ]
                .compactMap { headers[$0] },
                installationId: headers["x-parse-installation-id"])
        } else {
            self.init(
                applicationId: body["_ApplicationId"]?.stringValue, masterKey: body["_MasterKey"]?.stringValue,
                clientKeys: ["_ClientKey", "_JavaScriptKey", "_RESTAPIKey"].compactMap { body[$0]?.stringValue },
                installationId: body["_InstallationId"]?.stringValue)
        }
    }
}

/// Parse Server's keys and who a request is to them.
public struct ParseKeyring: Sendable {
    public var applicationId: String
    public var masterKey: String
    /// Client, JavaScript, .NET and REST keys configured; when none is, any (or none) is accepted.
    public var clientKeys: [String]

    public init(applicationId: String, masterKey: String, clientKeys: [String]) {
        self.applicationId = applicationId
        self.masterKey = masterKey
        self.clientKeys = clientKeys
    }

    public enum Access: Sendable, Equatable { case master, client }

    /// `handleParseHeaders`: the application id always; the master key makes a master; otherwise a
    /// client key when any is configured.
    public func access(_ credentials: ParseCredentials) throws(ParseFailure) -> Access {
        guard credentials.applicationId == applicationId else { throw .unauthorized }
        if credentials.masterKey == masterKey { return .master }
        guard clientKeys.isEmpty || credentials.clientKeys.contains(where: clientKeys.contains) else {
            throw .unauthorized
        }
        return .client
    }
}

/// Where a call goes: the paths FakeParse serves below its mount (`/parse`).
public enum ParseRoute: Equatable, Sendable {
    case health
    case serverInfo
    case find(ParseClass)
    case create(ParseClass)
    case get(ParseClass, String)
    case update(ParseClass, String)
    case delete(ParseClass, String)
    case push
    case batch

    public init(method: ParseRequest.Method, path: [String]) throws(ParseFailure) {
        let first = path.first ?? ""
        switch (method, first, path.count) {
        case (.get, "health", 1): self = .health
        case (.get, "serverInfo", 1): self = .serverInfo
        case (.post, "push", 1): self = .push
        case (.post, "batch", 1): self = .batch
        case (_, "installations", 1...2):
            self = try Self.object(method, .installation, path.dropFirst(1).first, path)
        case (_, "classes", 2...3):
            guard let parseClass = ParseClass(rawValue: path[1]) else { throw Self.unserved(method, path) }
            self = try Self.object(method, parseClass, path.dropFirst(2).first, path)
        default:
            throw Self.unserved(method, path)
        }
    }

    private static func object(
        _ method: ParseRequest.Method, _ parseClass: ParseClass, _ id: String?, _ path: [String]
    ) throws(ParseFailure) -> ParseRoute {
        switch (method, id) {
        case (.get, nil): return .find(parseClass)
        case (.post, nil): return .create(parseClass)
        case (.get, let id?): return .get(parseClass, id)
        case (.put, let id?): return .update(parseClass, id)
        case (.delete, let id?): return .delete(parseClass, id)
        default: throw unserved(method, path)
        }
    }

    private static func unserved(_ method: ParseRequest.Method, _ path: [String]) -> ParseFailure {
        ParseFailure(
            status: 404,
            "FakeParse does not serve \(method.rawValue) /\(path.joined(separator: "/")) (docs/parse.md lists its routes)"
        )
    }
}

/// The classes FakeParse keeps.
public enum ParseClass: String, Sendable, CaseIterable {
    case installation = "_Installation"
    case pushStatus = "_PushStatus"
    /// FakeParse's own: what became of each device a push went to (read-only, master key).
    case pushOutcome = "_PushOutcome"

    /// How Parse Server names the class in its 119 texts.
    public var collectionName: String { self == .installation ? "installation" : rawValue }
}
