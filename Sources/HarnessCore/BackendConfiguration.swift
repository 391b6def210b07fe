import Backends
import Foundation

/// harness.yml's `backends.<name>`: a server under test that the harness starts for each scenario
/// naming it, before the apps, with the fakes' endpoints in its environment.
public struct BackendConfiguration: Sendable, Equatable {
    /// The port the backend listens on, which the harness tells it in `HARNESS_PORT`.
    public enum Port: Sendable, Equatable {
        case fixed(Int)
        /// A free port the harness chooses for each run.
        case free
    }

    /// When the started backend counts as ready.
    public enum Ready: Sendable, Equatable {
        /// Its port accepts TCP connections.
        case port
        /// `GET` of this path on its port answers 2xx or 3xx.
        case http(path: String)
        /// A line of its output contains this text.
        case line(String)
        /// As soon as its process has started.
        case started
    }

    public var name: String
    public var command: [String]
    /// Relative to harness.yml's folder; that folder itself when nil.
    public var workingDirectory: String?
    public var environment: [String: String] = [:]
    public var port: Port?
    public var ready: Ready = .started
    public var readyTimeout: Duration = .seconds(30)
    public var stopGrace: Duration = .seconds(5)

    public init(name: String, command: [String]) {
        self.name = name
        self.command = command
    }

    /// The variable that gives the apps and the other backends this backend's URL:
    /// `HARNESS_BACKEND_<NAME>_URL`, the name in capitals with every other character than a letter or a
    /// digit as `_`.
    public var urlVariable: String {
        let letters = name.uppercased().unicodeScalars.map {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? Character($0) : "_"
        }
        return "HARNESS_BACKEND_\(String(letters))_URL"
    }
}

/// How one run starts its backends, decided from their settings, the ports chosen for them and the
/// services' endpoints: each one's command, environment and readiness, and what the apps are told.
public struct BackendLaunchPlan: Sendable, Equatable {
    public var backends: [Backend]
    /// `HARNESS_BACKEND_<NAME>_URL` for each backend with a port: added to the apps' environment.
    public var appEnvironment: [String: String]

    /// - Parameters:
    ///   - ports: the port each backend with one listens on in this run, by name.
    ///   - endpoints: the services' endpoints as variables (``Endpoints/environment``).
    ///   - inherited: the harness's own environment, which backends start with.
    ///   - dataDirectory: a folder of the run's state for each backend, by name.
    public init(
        _ configurations: [BackendConfiguration], ports: [String: Int], endpoints: [String: String],
        inherited: [String: String], baseDirectory: URL, dataDirectory: (String) -> URL
    ) throws(BackendPlanError) {
        var urls: [String: String] = [:]
        for configuration in configurations {
            guard configuration.port != nil else { continue }
            guard let port = ports[configuration.name] else {
                throw BackendPlanError(backend: configuration.name, message: "no port was chosen for it")
            }
            urls[configuration.urlVariable] = "http://127.0.0.1:\(port)"
        }
        appEnvironment = urls
        backends = []
        for configuration in configurations {
            let port = configuration.port == nil ? nil : ports[configuration.name]
            var given = endpoints.merging(urls) { $1 }
            given["HARNESS_DATA_DIR"] = dataDirectory(configuration.name).path
            if let port { given["HARNESS_PORT"] = String(port) }
            let known = inherited.merging(given) { $1 }
            func expanded(_ text: String, _ place: String) throws(BackendPlanError) -> String {
                do throws(VariableExpansion.Unset) {
                    return try VariableExpansion.expand(text, from: known)
                } catch {
                    throw BackendPlanError(
                        backend: configuration.name,
                        message: "\(place) names ${\(error.name)}, which is not set; set are the harness's "
                            + given.keys.sorted().joined(separator: ", ") + " and the harness's own environment")
                }
            }
            var own: [String: String] = [:]
            for (key, value) in configuration.environment { own[key] = try expanded(value, "environment.\(key)") }
            var command: [String] = []
            for (index, argument) in configuration.command.enumerated() {
                command.append(try expanded(argument, "command[\(index)]"))
            }
            let readiness: Backend.Readiness
            switch (configuration.ready, port) {
            case (.started, _): readiness = .started
            case (.line(let text), _): readiness = .line(text)
            case (.port, let port?): readiness = .port(port)
            case (.http(let path), let port?): readiness = .http(port: port, path: path)
            case (.port, nil), (.http, nil):
                throw BackendPlanError(backend: configuration.name, message: "its readiness needs a port")
            }
            let folder = configuration.workingDirectory.map {
                baseDirectory.appendingPathComponent($0).standardizedFileURL
            }
            backends.append(
                Backend(
                    name: configuration.name, command: command, workingDirectory: folder ?? baseDirectory,
                    environment: given.merging(own) { $1 }, readiness: readiness,
                    readyTimeout: configuration.readyTimeout, stopGrace: configuration.stopGrace))
        }
    }
}

/// A backend that cannot be started as configured.
public struct BackendPlanError: Error, CustomStringConvertible, Equatable {
    public var backend: String
    public var message: String
    public var description: String { "backends.\(backend): \(message)" }
}

/// `${NAME}` in a backend's command and environment, replaced by the variable's value; `$$` is a `$`.
/// Any other `$` stays as written, so a shell's own `$NAME` reaches the shell.
enum VariableExpansion {
    struct Unset: Error {
        var name: String
    }

    static func expand(_ text: String, from variables: [String: String]) throws(Unset) -> String {
        guard text.contains("$") else { return text }
        var result = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("$") {
                result += "$"
                rest = after.dropFirst()
            } else if after.hasPrefix("{"), let close = after.firstIndex(of: "}") {
                let name = String(after[after.index(after: after.startIndex)..<close])
                guard let value = variables[name] else { throw Unset(name: name) }
                result += value
                rest = after[after.index(after: close)...]
            } else {
                result += "$"
                rest = after
            }
        }
        return result + rest
    }
}
