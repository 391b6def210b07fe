import Foundation

/// A cassette or HAR file that cannot be used: which file, where in it (a JSON path such as
/// `$.log.entries[3].response.status`), and what is wrong.
public struct CassetteError: Error, CustomStringConvertible, Equatable {
    public var file: String
    /// `$` for the whole document; empty when the problem is not inside a JSON document.
    public var jsonPath: String
    public var problem: String
    /// What kind of problem it is, for a caller (or a test) that must tell them apart.
    public var kind: Kind

    /// The kinds of problem a caller may act on differently; most are ``unusable``.
    public enum Kind: Sendable, Equatable {
        /// Missing, unreadable, or not what the harness reads: the JSON path says where.
        case unusable
        /// A file or folder of the cassette is a symbolic link: a cassette is read only from inside
        /// itself, so nothing is read through one, wherever it points.
        case symbolicLink
        /// A body file's bytes do not hash to the SHA-256 that names it.
        case digestMismatch
        /// A body, or the whole document, too large for a HAR the harness can read back (on export).
        case tooLargeToExport
    }

    public init(file: String, jsonPath: String = "", problem: String, kind: Kind = .unusable) {
        self.file = file
        self.jsonPath = jsonPath
        self.problem = problem
        self.kind = kind
    }

    /// `path`, a file or folder a cassette names, is a symbolic link.
    static func symbolicLink(_ path: String) -> CassetteError {
        CassetteError(
            file: path,
            problem: "is a symbolic link; a cassette's files and folders are read only from inside it, never "
                + "through a link (wherever it points): put the file or folder itself there",
            kind: .symbolicLink)
    }

    /// The body file at `path` does not hold the bytes its name, a SHA-256, says.
    static func digestMismatch(_ path: String, named expected: String, actual: String) -> CassetteError {
        CassetteError(
            file: path,
            problem: "holds bytes whose SHA-256 is \(actual), not the \(expected) its name says: the body was "
                + "changed or damaged after it was recorded, and is neither served nor exported; record the "
                + "cassette again, or put the recorded file back",
            kind: .digestMismatch)
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
