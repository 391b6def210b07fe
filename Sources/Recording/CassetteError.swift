import Foundation

/// A cassette or HAR file that cannot be used: which file, where in it (a JSON path such as
/// `$.log.entries[3].response.status`), and what is wrong.
public struct CassetteError: Error, CustomStringConvertible, Equatable {
    public var file: String
    /// `$` for the whole document; empty when the problem is not inside a JSON document.
    public var jsonPath: String
    public var problem: String

    public init(file: String, jsonPath: String = "", problem: String) {
        self.file = file
        self.jsonPath = jsonPath
        self.problem = problem
    }

    public var description: String {
        jsonPath.isEmpty ? "\(file): \(problem)" : "\(file) at \(jsonPath): \(problem)"
    }

    /// The JSON path of a decoder's coding path: `$.log.entries[3].request`.
    static func jsonPath(_ codingPath: [any CodingKey]) -> String {
        codingPath.reduce("$") { path, key in
            if let index = key.intValue { return "\(path)[\(index)]" }
            return "\(path).\(key.stringValue)"
        }
    }

    /// Says where a `JSONDecoder` failed and why, in words.
    static func decoding(_ error: any Error, file: String) -> CassetteError {
        guard let error = error as? DecodingError else {
            return CassetteError(file: file, jsonPath: "$", problem: "not valid JSON (\(error.localizedDescription))")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return CassetteError(
                file: file, jsonPath: jsonPath(context.codingPath),
                problem: "the required field \"\(key.stringValue)\" is missing")
        case .typeMismatch(let type, let context):
            return CassetteError(
                file: file, jsonPath: jsonPath(context.codingPath), problem: "expected \(describe(type)) here")
        case .valueNotFound(let type, let context):
            return CassetteError(
                file: file, jsonPath: jsonPath(context.codingPath), problem: "expected \(describe(type)), found null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return CassetteError(
                    file: file, jsonPath: "$",
                    problem: "not valid JSON, truncated or corrupt" + (detail.map { " (\($0))" } ?? ""))
            }
            return CassetteError(
                file: file, jsonPath: jsonPath(context.codingPath), problem: context.debugDescription)
        @unknown default:
            return CassetteError(file: file, jsonPath: "$", problem: "\(error)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}
