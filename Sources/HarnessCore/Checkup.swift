import Foundation

/// What `harness doctor` finds on this machine for the runs harness.yml describes, decided from facts
/// gathered outside: each check passed or not, and for each problem one thing to do. A value.
public struct Checkup: Sendable, Equatable {
    public struct Finding: Sendable, Equatable {
        /// What was checked, and what was seen.
        public var what: String
        /// What to do; nil when the check passed.
        public var fix: String?
        public var passed: Bool { fix == nil }
    }

    public var findings: [Finding] = []
    /// Whether every check passed.
    public var healthy: Bool { findings.allSatisfy(\.passed) }

    public init() {}

    /// The fixed ports `configuration` listens on, each with its key in harness.yml; 0 (a free port
    /// each run) is never a problem.
    public static func fixedPorts(of configuration: HarnessConfiguration) -> [(key: String, port: Int)] {
        let services = configuration.services
        var ports: [(String, Int?)] = [
            ("services.apns.port", services.apns.port), ("services.apns.controlPort", services.apns.controlPort),
            ("services.apns.legacyPort", services.apns.legacyPort),
            ("services.apns.feedbackPort", services.apns.feedbackPort),
            ("services.media.port", services.media.port), ("services.media.controlPort", services.media.controlPort),
            ("services.parse.port", services.parse.port),
        ]
        for backend in configuration.backends {
            if case .fixed(let port) = backend.port { ports.append(("backends.\(backend.name).port", port)) }
        }
        return ports.compactMap { key, port in port.flatMap { $0 == 0 ? nil : (key, $0) } }
    }

    /// Each fixed port, free or not (`free`), with the fix for one that is taken, naming what holds it
    /// when `holder` can tell.
    public mutating func ports(
        _ ports: [(key: String, port: Int)], free: (Int) -> Bool, holder: (Int) -> PortHolder? = { _ in nil }
    ) {
        for (key, port) in ports {
            guard !free(port) else {
                findings.append(Finding(what: "port \(port) (\(key)) is free", fix: nil))
                continue
            }
            let what = holder(port).map { "\($0)" } ?? "what listens on \(port) (ss -ltnp 'sport = :\(port)' names it)"
            findings.append(
                Finding(
                    what: "port \(port) (\(key)) is in use",
                    fix: "stop \(what), or set \(key): 0 for a free port each run"))
        }
    }

    /// The programs the apps and backends run (`program` by `whose`), each found or not.
    public mutating func programs(_ programs: [(whose: String, program: String)], found: (String) -> Bool) {
        for (whose, program) in programs {
            if found(program) {
                findings.append(Finding(what: "\(whose) runs \(program): found", fix: nil))
                continue
            }
            let install =
                ["python3", "python"].contains(program)
                ? "install Python 3 (apt-get install python3)"
                : program.contains("/")
                    ? "build it, or correct the command in harness.yml (a relative path is from harness.yml's folder)"
                    : "install it, or put it on PATH"
            findings.append(Finding(what: "\(whose) runs \(program), which is not found", fix: install))
        }
    }

    /// The files the apps' and backends' commands name (a script given to its interpreter), each there
    /// or not.
    public mutating func files(_ files: [(whose: String, path: String)], exists: (String) -> Bool) {
        for (whose, path) in files {
            findings.append(
                exists(path)
                    ? Finding(what: "\(whose) reads \(path): found", fix: nil)
                    : Finding(
                        what: "\(whose) reads \(path), which is not there",
                        fix: "correct the path in harness.yml (a relative path is from harness.yml's folder)"))
        }
    }

    /// The arguments of `command` after its program that name a file to read: a script given to its
    /// interpreter (`app.py`, `server.rb`, `./run.sh`, `Fixtures/apps/x.py`), not an option or a word.
    public static func scriptArguments(of command: [String]) -> [String] {
        let scripts: Set<String> = ["py", "rb", "pl", "sh", "js", "mjs", "php", "lua", "jar"]
        return command.dropFirst().filter { argument in
            guard !argument.hasPrefix("-"), !argument.contains("{"), let dot = argument.lastIndex(of: ".") else {
                return false
            }
            return scripts.contains(String(argument[argument.index(after: dot)...]).lowercased())
        }
    }

    /// The folder runs keep their reports and state in, writable or not (`problem` saying why not).
    public mutating func stateFolder(_ path: String, problem: String?) {
        findings.append(
            problem.map {
                Finding(
                    what: "\(path) cannot be written: \($0)",
                    fix: "make it writable, or run from a folder you can write")
            } ?? Finding(what: "\(path) is writable", fix: nil))
    }

    /// A library the harness loaded, by its version; a failure to ask it is a problem.
    public mutating func library(_ name: String, version: Result<String, any Error>, install: String) {
        switch version {
        case .success(let version): findings.append(Finding(what: "\(name) \(version) is loaded", fix: nil))
        case .failure(let error):
            findings.append(Finding(what: "\(name) cannot be used: \(error)", fix: install))
        }
    }

    public static func == (left: Checkup, right: Checkup) -> Bool { left.findings == right.findings }
}
