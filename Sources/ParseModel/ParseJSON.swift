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

    /// Compact JSON with sorted keys.
    public static func encode(_ value: JSONValue) -> Data { Data(value.jsonString().utf8) }
}
