import Foundation

/// Reads one line of the device socket as JSON-RPC 2.0 (§4, §5): a message, or the error answer the
/// line deserves — `-32700` when it is not JSON, `-32600` when it is JSON but not a message — carrying
/// the line's `id` when one can be read and `null` when not, so a client waiting on its request always
/// hears back.
public enum RPCLine {
    /// An error answer to a line that is not a usable message.
    public struct Unreadable: Error, Sendable, Equatable {
        /// The request's `id` as it was sent (a number or a string), or `.null`.
        public var id: JSONValue
        public var error: RPCError

        /// The answer's line, newline included.
        public func encodedLine() -> Data {
            var line = Data(#"{"error":"#.utf8)
            line.append(
                Data(
                    JSONValue.object(["code": .number(Double(error.code)), "message": .string(error.message)])
                        .jsonString().utf8))
            line.append(Data(#","id":\#(id.jsonString()),"jsonrpc":"2.0"}"#.utf8))
            line.append(UInt8(ascii: "\n"))
            return line
        }
    }

    public static func parse(_ line: some DataProtocol) -> Result<RPCMessage, Unreadable> {
        let data = Data(line)
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            return .failure(
                Unreadable(id: .null, error: RPCError(code: -32700, message: "Parse error: the line is not JSON")))
        }
        guard let fields = value.objectValue else { return .failure(invalid(.null, "a message must be a JSON object")) }
        let raw = fields["id"] ?? .null
        let id: JSONValue = integer(raw) != nil || raw.stringValue != nil ? raw : .null
        guard fields["jsonrpc"] == .string("2.0") else {
            return .failure(invalid(id, #"a message must have "jsonrpc": "2.0""#))
        }
        guard raw == .null || integer(raw) != nil else {
            return .failure(invalid(id, "ids on this socket are integers, not \(raw.jsonString())"))
        }
        guard let message = try? RPCMessage.decode(line: data), message.method != nil || message.id != nil else {
            return .failure(
                invalid(
                    id,
                    "a message is a request (id and method), a notification (method) or a response (id and result or error)"
                ))
        }
        return .success(message)
    }

    private static func invalid(_ id: JSONValue, _ message: String) -> Unreadable {
        Unreadable(id: id, error: RPCError(code: -32600, message: "Invalid Request: " + message))
    }

    private static func integer(_ value: JSONValue) -> Int? {
        guard let number = value.numberValue, number == number.rounded(), abs(number) < 9e15 else { return nil }
        return Int(number)
    }
}
