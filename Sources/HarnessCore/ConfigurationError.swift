/// A problem in harness.yml, located by file, line and key path, with a hint where one helps.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// Dotted path of the offending key, e.g. `services.apns.prot`.
    public var keyPath: String
    public var message: String

    public init(file: String, line: Int?, column: Int?, keyPath: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ":\(column)" }
        return "\(location): \(keyPath.isEmpty ? "" : "'\(keyPath)': ")\(message)"
    }
}
