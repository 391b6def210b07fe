import Foundation

extension ConfigurationLoader {
    /// `backends`: each a server under test, read strictly; their names name folders and variables.
    static func readBackends(_ reader: YAMLReader) throws -> [BackendConfiguration] {
        var backends: [BackendConfiguration] = []
        var variables: [String: String] = [:]
        for (name, entry) in try reader.namedEntries() {
            if let problem = YAMLReader.problem(withName: name) { throw entry.error(problem) }
            let backend = try readBackend(name, entry)
            if let other = variables[backend.urlVariable] {
                throw entry.error("'\(name)' and '\(other)' would both be \(backend.urlVariable): rename one")
            }
            variables[backend.urlVariable] = name
            backends.append(backend)
        }
        return backends
    }

    private static func readBackend(_ name: String, _ reader: YAMLReader) throws -> BackendConfiguration {
        var backend = BackendConfiguration(name: name, command: [])
        var readySet = false
        let found = try KeyTable<BackendConfiguration>([
            "command": { value, backend in
                backend.command = try value.strings()
                guard !backend.command.isEmpty else { throw value.error("the command must not be empty") }
            },
            "workingDirectory": { $1.workingDirectory = try $0.string() },
            "environment": { value, backend in
                for (key, entry) in try value.namedEntries() {
                    guard Self.isVariableName(key) else {
                        throw entry.error(
                            "'\(key)' is not a variable name: letters, digits and '_', not starting with a digit")
                    }
                    backend.environment[key] = try entry.string()
                }
            },
            "port": { value, backend in
                if value.node.int == nil, try value.string() == "free" {
                    backend.port = .free
                } else {
                    guard let port = value.node.int, (1...65_535).contains(port) else {
                        throw value.error("a port is 1 to 65535, or free (a free port each run, in HARNESS_PORT)")
                    }
                    backend.port = .fixed(port)
                }
            },
            "ready": { value, backend in
                readySet = true
                if case .scalar = value.node {
                    switch try value.string() {
                    case "port": backend.ready = .port
                    case "started": backend.ready = .started
                    case let other:
                        throw value.error(
                            "ready is port, started, {http: /path} or {line: text}, not '\(other)'")
                    }
                    return
                }
                var ready: BackendConfiguration.Ready?
                let keys = try KeyTable<BackendConfiguration.Ready?>([
                    "http": { path, ready in
                        let text = try path.string()
                        guard text.hasPrefix("/"), !text.contains(where: \.isWhitespace) else {
                            throw path.error("an HTTP readiness path starts with '/' and has no spaces, not '\(text)'")
                        }
                        ready = .http(path: text)
                    },
                    "line": { text, ready in
                        let wanted = try text.string()
                        guard !wanted.isEmpty else { throw text.error("the awaited line's text must not be empty") }
                        ready = .line(wanted)
                    },
                ]).read(value, into: &ready)
                guard keys.count == 1, let ready else { throw value.error("ready takes one of http or line") }
                backend.ready = ready
            },
            "readyTimeout": { $1.readyTimeout = try $0.duration(atMost: .seconds(3600)) },
            "stopGrace": { $1.stopGrace = try $0.duration(atMost: .seconds(600)) },
        ]).read(reader, into: &backend)
        guard found.contains("command") else { throw reader.error("a backend needs a 'command' (a list)") }
        if !readySet, backend.port != nil { backend.ready = .port }
        switch backend.ready {
        case .port, .http:
            guard backend.port != nil else {
                throw reader.error("ready: \(backend.ready == .port ? "port" : "http") needs the backend's 'port'")
            }
        case .line, .started: break
        }
        return backend
    }

    /// `NAME_1`: what a POSIX shell takes as a variable name.
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }
}
