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
    public static func text(_ value: JSONValue) -> String {
        var output = ""
        write(value, into: &output)
        return output
    }

    public static func encode(_ value: JSONValue) -> Data { Data(text(value).utf8) }

    private static func write(_ value: JSONValue, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number, abs(number) < 1e15 {
                output += String(Int64(number))
            } else if number.isFinite {
                output += "\(number)"
            } else {
                output += "null"
            }
        case .string(let text): writeString(text, into: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                write(item, into: &output)
            }
            output += "]"
        case .object(let object):
            output += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                writeString(key, into: &output)
                output += ":"
                write(object[key]!, into: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
