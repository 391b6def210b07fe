import Foundation

/// `harness serve` as a backend developer runs it: every fake service in one process on free ports,
/// with their endpoints read from the file it writes. Stopped with SIGTERM by ``stop()``.
public final class ServedHarness: Sendable {
    public let process: RunningChild
    /// The endpoints file: `apns`, `media` and `parse`, each a map of its facts (URLs, keys, files).
    public let endpoints: [String: [String: String]]
    /// Where `harness serve` wrote them.
    public let endpointsFile: URL

    /// The services' state folder (credentials, Parse's SQLite file).
    public let stateDirectory: URL

    /// - Parameters:
    ///   - arguments: more options for `harness serve`, such as `--cassette`.
    ///   - stateDirectory: the state folder, to start from an earlier serve's (by default a new one).
    public init(_ name: String = #function, arguments: [String] = [], stateDirectory: URL? = nil) async throws {
        let directory = try PackagePaths.temporaryDirectory(name)
        let file = directory.appendingPathComponent("endpoints.json")
        endpointsFile = file
        self.stateDirectory = stateDirectory ?? directory.appendingPathComponent("state")
        process = try RunningChild(
            HarnessCommand.path,
            ["serve", "--ephemeral-ports", "--endpoints", file.path, "--state-dir", self.stateDirectory.path]
                + arguments,
            currentDirectory: PackagePaths.root)
        guard await process.waitForLine(containing: "services are up") != nil else {
            throw NotServing(output: process.output)
        }
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: [String: Any]] ?? [:]
        endpoints = object.mapValues { $0.compactMapValues { $0 as? String } }
    }

    public func url(_ service: String, _ key: String = "url") -> String { endpoints[service]?[key] ?? "" }

    /// Whether the process is still running: a trap on one client's input would end it.
    public var isAlive: Bool { process.isRunning }

    /// Stops the services with SIGTERM and returns the exit status.
    public func stop() async -> Int32 {
        process.send(SIGTERM)
        return await process.waitForExit()
    }

    public struct NotServing: Error, CustomStringConvertible {
        var output: String
        public var description: String { "harness serve did not come up:\n\(output)" }
    }
}

/// An HTTP exchange made by curl: the status and the body.
public struct CurlExchange: Sendable, CustomStringConvertible {
    public var status: Int
    public var body: String
    public var transcript: String
    public var description: String { "\(status) \(body)\n\(transcript)" }

    /// Runs curl with `arguments` (and `--silent --show-error`), reading the status it prints last.
    public static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> CurlExchange {
        let result = try await ChildProcess.run(
            "curl", ["--silent", "--show-error", "--write-out", "\n%{http_code}"] + arguments, timeout: timeout)
        var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = lines.popLast().flatMap { Int($0) } ?? 0
        return CurlExchange(status: status, body: lines.joined(separator: "\n"), transcript: result.transcript)
    }

    /// A JSON request: `method` with `body` to `url`, and any `headers` ("Name: value").
    public static func json(_ method: String, _ url: String, _ body: String, headers: [String] = []) async throws
        -> CurlExchange
    {
        try await run(
            ["-X", method, "-H", "Content-Type: application/json", "--data-binary", body, url]
                + headers.flatMap { ["-H", $0] })
    }
}
