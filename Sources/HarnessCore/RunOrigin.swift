import Foundation
import Recording

/// How a run was made, as a cassette keeps it (``CassetteMeta/Run``): the harness.yml it read, its
/// Parse keys replaced, and what the command line gave.
public struct RunOrigin: Sendable {
    /// The copy of harness.yml to keep; nil when its keys could not be replaced (the cassette then keeps
    /// no copy, and a replay reads the file as it is then).
    public var configuration: Data?
    /// The command line's part; its scenario and network are each run's own.
    public var command: CassetteMeta.Run

    public init(configuration: Data?, command: CassetteMeta.Run) {
        self.configuration = configuration
        self.command = command
    }

    /// The recipe of one run: a matrix cell's scenario and profile, or the scenario alone.
    public func recipe(for scenario: Scenario) -> CassetteMeta.Run {
        var run = command
        run.scenario = scenario.cell?.scenario ?? scenario.name
        run.network = scenario.cell?.profile
        return run
    }

    /// The copy of harness.yml a cassette keeps: the file's bytes with each Parse key it sets replaced by
    /// a stand-in that is still a plain YAML value (`redacted-parse-master-key`), so the copy runs and
    /// holds no secret. A replay runs with the stand-ins, which reach the apps and backends as the keys
    /// did (through the environment). The copy is read back: when it no longer reads, there is no copy
    /// (nil). A key the file spells with YAML escapes (`"\x6e…"`) is not found, and stays.
    public static func keptCopy(of bytes: Data, services: ServicesConfiguration) -> Data? {
        let keys: [(name: String, value: String?)] = [
            ("parse-master-key", services.parse.masterKey), ("parse-client-key", services.parse.clientKey),
            ("parse-rest-api-key", services.parse.restAPIKey),
        ]
        var text = String(decoding: bytes, as: UTF8.self)
        // The keys the file writes (a key it leaves to its default is not in it).
        let secrets = keys.compactMap { key in key.value.map { (name: key.name, value: $0) } }
            .filter { $0.value.utf8.count >= Redactor.shortestSecret && text.contains($0.value) }
            // Longest first: a key that contains another is replaced whole.
            .sorted { $0.value.utf8.count > $1.value.utf8.count }
        for secret in secrets { text = text.replacingOccurrences(of: secret.value, with: "redacted-\(secret.name)") }
        guard (try? ConfigurationLoader.parse(text, file: "harness.yml")) != nil else { return nil }
        return Data(text.utf8)
    }
}
