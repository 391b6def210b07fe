import Foundation

/// One JSON-RPC 2.0 message as it travels on the device socket, one per line.
///
/// A single struct covers requests (`id` + `method`), notifications (`method` only) and responses
/// (`id` + `result` or `error`), which is what a line reader needs before it knows what it holds.
public struct RPCMessage: Codable, Sendable, Equatable {
    public var jsonrpc: String = "2.0"
    public var id: Int?
    public var method: String?
    public var params: JSONValue?
    public var result: JSONValue?
    public var error: RPCError?

    public init(
        id: Int? = nil, method: String? = nil, params: JSONValue? = nil, result: JSONValue? = nil,
        error: RPCError? = nil
    ) {
        self.id = id
        self.method = method
        self.params = params
        self.result = result
        self.error = error
    }

    public static func request<P: Encodable>(id: Int, _ method: String, _ params: P) throws -> RPCMessage {
        RPCMessage(id: id, method: method, params: try JSONValue(encoding: params))
    }

    public static func notification<P: Encodable>(_ method: String, _ params: P) throws -> RPCMessage {
        RPCMessage(method: method, params: try JSONValue(encoding: params))
    }

    public static func response<R: Encodable>(id: Int, _ result: R) throws -> RPCMessage {
        RPCMessage(id: id, result: try JSONValue(encoding: result))
    }

    public static func failure(id: Int?, _ error: RPCError) -> RPCMessage {
        RPCMessage(id: id, error: error)
    }

    public var isResponse: Bool { method == nil && id != nil }

    /// Every field present is written; an error answer always has its `id`, `null` when the request's
    /// could not be read (JSON-RPC 2.0 §5).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jsonrpc, forKey: .jsonrpc)
        if let id {
            try container.encode(id, forKey: .id)
        } else if error != nil {
            try container.encodeNil(forKey: .id)
        }
        try container.encodeIfPresent(method, forKey: .method)
        try container.encodeIfPresent(params, forKey: .params)
        try container.encodeIfPresent(result, forKey: .result)
        try container.encodeIfPresent(error, forKey: .error)
    }

    /// The line to write on the socket, newline included.
    public func encodedLine() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    public static func decode(line: some DataProtocol) throws -> RPCMessage {
        try JSONDecoder().decode(RPCMessage.self, from: Data(line))
    }

    public func decodeParams<P: Decodable>(_ type: P.Type) throws -> P {
        try (params ?? .object([:])).decode(type)
    }
}

/// A JSON-RPC error object.
public struct RPCError: Codable, Sendable, Equatable, Error {
    public var code: Int
    public var message: String

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    public static func invalidParams(_ message: String) -> RPCError { RPCError(code: -32602, message: message) }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, message: "unknown method '\(method)'")
    }
    public static func invalidRequest(_ message: String) -> RPCError { RPCError(code: -32600, message: message) }
    /// The device refused what the app asked because iOS would (wrong state, unknown session, …).
    public static func refused(_ message: String) -> RPCError { RPCError(code: 1, message: message) }
}
