import DeviceProtocol
import Foundation

/// Reading and writing Parse's JSON.
public enum ParseJSON {
    /// Decodes a body or parameter. Malformed JSON, and JSON nested deeper than the decoder follows
    /// (512 levels), are refused as Parse Server's body parser refuses them: 400 with the parser's
    /// message and no code.
    public static func decode(_ data: Data) throws(ParseFailure) -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .malformedBody("Invalid JSON: \(reason(error))")
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ParseFailure) -> JSONValue { try decode(Data(bytes)) }

    /// What the decoder said was wrong, without Swift's type names.
    private static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return "\(error)"
    }

    /// Compact JSON with sorted keys: the bytes `JSONValue.jsonString()` gives, written by hand, as
    /// every stored row and every answer is (Foundation's encoder was a tenth of a push's time).
    public static func text(_ value: JSONValue) -> String { String(decoding: bytes(value), as: UTF8.self) }

    public static func encode(_ value: JSONValue) -> Data { Data(bytes(value)) }

    /// The same JSON as UTF-8 bytes; written as bytes, not appended to a `String` (a third faster again).
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    private static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 {
                output.append(contentsOf: String(Int64(number)).utf8)
            } else if number.isFinite {
                // Swift writes whole numbers from 1e15 to 2^53 as "1000000000000000.0"; Foundation drops the ".0".
                let text = "\(number)"
                output.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let text): writeString(text, into: &output)
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(item, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(object[key]!, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        // Most strings (ids, tokens, dates) need no escape and go in whole.
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
                case 0x0A: output.append(contentsOf: "\\n".utf8)
                case 0x0D: output.append(contentsOf: "\\r".utf8)
                case 0x09: output.append(contentsOf: "\\t".utf8)
                case 0x08: output.append(contentsOf: "\\b".utf8)
                case 0x0C: output.append(contentsOf: "\\f".utf8)
                case ..<0x20:
                    output.append(contentsOf: "\\u00".utf8)
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0x0F)])
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
