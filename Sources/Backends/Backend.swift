import Foundation

/// A server under test that the harness runs beside the fakes and the apps: the command that starts
/// it, and how the harness knows it is ready.
public struct Backend: Sendable, Equatable {
    /// When a started backend counts as ready.
    public enum Readiness: Sendable, Equatable, CustomStringConvertible {
        /// Something accepts TCP connections on 127.0.0.1 at this port.
        case port(Int)
        /// `GET http://127.0.0.1:<port><path>` answers 2xx or 3xx.
        case http(port: Int, path: String)
        /// A line of its output contains this text.
        case line(String)
        /// As soon as it has started.
        case started

        public var description: String {
            switch self {
            case .port(let port): "port \(port) accepts connections"
            case .http(let port, let path): "GET http://127.0.0.1:\(port)\(path) answers 2xx or 3xx"
            case .line(let text): "it prints a line containing '\(text)'"
            case .started: "it has started"
            }
        }
    }

    public var name: String
    public var command: [String]
    public var workingDirectory: URL
    /// Variables set for it on top of the harness's own and the fakes' endpoints.
    public var environment: [String: String]
    public var readiness: Readiness
    /// How long it may take to become ready.
    public var readyTimeout: Duration
    /// How long it has to end after SIGTERM before it gets SIGKILL.
    public var stopGrace: Duration

    public init(
        name: String, command: [String], workingDirectory: URL, environment: [String: String] = [:],
        readiness: Readiness = .started, readyTimeout: Duration = .seconds(30), stopGrace: Duration = .seconds(5)
    ) {
        self.name = name
        self.command = command
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.readiness = readiness
        self.readyTimeout = readyTimeout
        self.stopGrace = stopGrace
    }
}
