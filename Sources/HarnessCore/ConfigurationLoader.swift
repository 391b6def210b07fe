import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import HarnessTimeline
import MediaServer
import NetworkConditions
import Yams

/// Reads harness.yml strictly: unknown keys and bad values are errors with file, line and key path.
public enum ConfigurationLoader {
    public static func load(path: String) throws -> HarnessConfiguration {
        try parse(String(decoding: try read(path: path), as: UTF8.self), file: path)
    }

    /// The file's bytes.
    ///
    /// - Throws: ``ConfigurationError`` when it cannot be read, or is not UTF-8.
    public static func read(path: String) throws -> Data {
        let bytes: Data
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ConfigurationError(
                file: path, line: nil, column: nil, keyPath: "",
                message: "there is no such file; 'harness init' writes a first one, or name another with -c")
        }
        guard !isFolder.boolValue else {
            throw ConfigurationError(
                file: path, line: nil, column: nil, keyPath: "", message: "is a folder, not a scenario file")
        }
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(
                file: path, line: nil, column: nil, keyPath: "",
                message: "cannot read the file: \(FileProblem.describe(error))")
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ConfigurationError(
                file: path, line: nil, column: nil, keyPath: "", message: "cannot read the file: it is not UTF-8 text")
        }
        return bytes
    }

    /// - Parameter baseDirectory: where relative paths resolve; by default the file's folder (a replay
    ///   reads the copy a cassette keeps, for the folder the recorded run was in).
    public static func parse(_ text: String, file: String, baseDirectory: URL? = nil) throws -> HarnessConfiguration {
        let root: Node
        do {
            // Yams.compose(yaml:), keeping the parser: it holds the anchors, which its nodes hold weakly and
            // the budget tells aliases by.
            if let place = YAMLAliasKeys.first(in: text) {
                throw ConfigurationError(
                    file: file, line: place.line, column: place.column, keyPath: "",
                    message: "an alias may not be a mapping key, nor be inside one: harness.yml's keys are names")
            }
            let parser = try Yams.Parser(yaml: text)
            guard let node = try parser.singleRoot() else {
                throw ConfigurationError(file: file, line: nil, column: nil, keyPath: "", message: "the file is empty")
            }
            // Before anything walks the document: an alias shares its anchor's node, so a 1 KB file can stand
            // for a billion nodes (issue 31).
            let budget = YAMLExpansionBudget.harnessYML
            let verdict = withExtendedLifetime(parser) { budget.verdict(on: node) }
            if case .over(let overrun) = verdict { throw budget.error(overrun, file: file) }
            root = node
        } catch let error as ConfigurationError {
            throw error
        } catch let error as YamlError {
            throw ConfigurationError(
                file: file, line: nil, column: nil, keyPath: "", message: "not valid YAML: \(error)")
        }
        let reader = YAMLReader(file: file, node: root, path: "")
        let baseDirectory =
            baseDirectory?.standardizedFileURL
            ?? URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL
        var configuration = HarnessConfiguration(file: file, baseDirectory: baseDirectory)
        // Before anything else: a file that is not version 1 is read no further.
        if let mapping = root.mapping, mapping["version"] == nil { throw reader.error("missing 'version: 1'") }
        try KeyTable<HarnessConfiguration>([
            "version": { version, _ in
                guard try version.int() == 1 else { throw version.error("only version 1 is supported") }
            },
            "services": { try servicesKeys(baseDirectory: baseDirectory).read($0, into: &$1.services) },
            "apps": { apps, configuration in
                for (name, app) in try apps.namedEntries() { configuration.apps[name] = try readApp(name, app) }
            },
            "backends": { $1.backends = try readBackends($0) },
            // After the apps, the backends and the services: steps name apps, scenarios backends, and a scenario's device block overlays
            // the services' one.
            "scenarios": { scenarios, configuration in
                for (name, scenario) in try scenarios.namedEntries() {
                    if let problem = YAMLReader.problem(withName: name) { throw scenario.error(problem) }
                    configuration.scenarios.append(
                        try readScenario(
                            name, scenario, apps: configuration.apps, backends: configuration.backends.map(\.name),
                            device: configuration.services.device, profiles: configuration.services.networkProfiles))
                }
            },
        ]).read(reader, into: &configuration)
        return configuration
    }

    private static func readApp(_ name: String, _ reader: YAMLReader) throws -> AppConfiguration {
        let knownModes: Set<String> = ["remote-notification", "fetch", "audio", "location", "voip", "processing"]
        var app = AppConfiguration(name: name, bundleId: "", build: nil, command: [], backgroundModes: [])
        let found = try KeyTable<AppConfiguration>([
            // The bundle id names the app's container folder and its push certificates' files.
            "bundleId": { value, app in
                app.bundleId = try value.string()
                if let problem = PushCertificateIssuer.problem(bundleId: app.bundleId) { throw value.error(problem) }
            },
            "build": { $1.build = try $0.strings() },
            "command": { value, app in
                app.command = try value.strings()
                guard !app.command.isEmpty else { throw value.error("the command must not be empty") }
            },
            "backgroundModes": { value, app in
                app.backgroundModes = Set(try value.strings())
                if let unknown = app.backgroundModes.subtracting(knownModes).first {
                    throw value.error(
                        "unknown background mode '\(unknown)'; known: \(knownModes.sorted().joined(separator: ", "))")
                }
            },
            "environment": { value, app in
                for (key, entry) in try value.namedEntries() { app.environment[key] = try entry.string() }
            },
        ]).read(reader, into: &app)
        guard found.contains("bundleId") else { throw reader.error("an app needs a 'bundleId'") }
        guard found.contains("command") else { throw reader.error("an app needs a 'command' (a list)") }
        return app
    }

    private static func readScenario(
        _ name: String, _ reader: YAMLReader, apps: [String: AppConfiguration], backends: [String],
        device base: DeviceConfiguration, profiles: NetworkProfiles
    ) throws -> Scenario {
        var scenario = Scenario(name: name)
        let found = try KeyTable<Scenario>([
            "description": { $1.description = try $0.string() },
            "apns": {
                try KeyTable<Scenario>(["coalescingWindow": { $1.coalescingWindow = try $0.duration() }])
                    .read($0, into: &$1)
            },
            "media": {
                try KeyTable<Scenario>([
                    "throttle": { $1.mediaThrottle = .set(try $0.nullOr { try $0.rate() }) },
                    "faults": { $1.mediaFaults = try readFaults($0) },
                ]).read($0, into: &$1)
            },
            "backends": { value, scenario in
                for item in try value.sequence() {
                    let name = try item.string()
                    guard backends.contains(name) else {
                        throw item.error(
                            backends.isEmpty
                                ? "no backend named '\(name)': harness.yml declares no backends"
                                : "no backend named '\(name)'; backends: \(backends.joined(separator: ", "))")
                    }
                    guard !scenario.backends.contains(name) else { throw item.error("'\(name)' is named twice") }
                    scenario.backends.append(name)
                }
            },
            // A scenario's device block overrides the services' one key by key.
            "device": { $1.device = try deviceKeys.overlay($0, on: base) },
            // After its device block, which each device's own settings overlay.
            "devices": { $1.devices = try readDevices($0, base: $1.device ?? base) },
            "network": { $1.network = try readNetwork($0, profiles) },
            "expectFailure": { value, scenario in
                for (name, why) in try value.namedEntries() {
                    var profile = "none"
                    if name.lowercased() != "none" {
                        do throws(NetworkError) {
                            profile = try profiles.named(name).name
                        } catch {
                            throw why.error("\(error.message), or none")
                        }
                    }
                    scenario.expectedFailures.append((profile, try why.string()))
                }
            },
            // After its devices, which steps name.
            "steps": { value, scenario in
                let devices = scenario.devices.map(\.name)
                scenario.steps = try value.sequence().map { item in
                    try readScenarioStep(item, devices: devices) { try readStep($0, apps: apps, profiles: profiles) }
                }
            },
            // After its devices, which file expectations name.
            "expect": { $1.expectation = try readExpectation($0, devices: $1.devices.map(\.name)) },
        ]).read(reader, into: &scenario)
        guard found.contains("steps") else { throw reader.error("a scenario needs 'steps'") }
        return scenario
    }

    private static func readStep(
        _ reader: YAMLReader, apps: [String: AppConfiguration], profiles: NetworkProfiles
    ) throws -> Step {
        if case .scalar = reader.node {
            switch try reader.string() {
            case "lock": return .lock
            case "unlock": return .unlock
            case "reboot": return .reboot
            case let other:
                throw reader.error("'\(other)' is not a step; steps without a value are lock, unlock and reboot")
            }
        }
        func app(_ value: YAMLReader) throws -> String {
            let name = try value.string()
            guard apps[name] != nil else {
                throw value.error("no app named '\(name)'; apps: \(apps.keys.sorted().joined(separator: ", "))")
            }
            return name
        }
        let kinds = KeyTable<Step?>([
            "launch": { $1 = .launch(app: try app($0)) },
            "home": { $1 = .home(app: try app($0)) },
            "foreground": { $1 = .foreground(app: try app($0)) },
            "crash": { $1 = .crash(app: try app($0)) },
            "jetsam": { $1 = .jetsam(app: try app($0)) },
            "forceQuit": { $1 = .forceQuit(app: try app($0)) },
            "backgroundFetch": { $1 = .backgroundFetch(app: try app($0)) },
            "tapNotification": { $1 = .tapNotification(app: try app($0)) },
            "uninstall": { $1 = .uninstall(app: try app($0)) },
            "tap": { value, step in
                var fields: (app: String?, button: String?)
                try KeyTable<(app: String?, button: String?)>([
                    "app": { $1.app = try app($0) },
                    "button": { $1.button = try $0.string() },
                ]).read(value, into: &fields)
                guard let name = fields.app, let button = fields.button else {
                    throw value.error("tap needs {app: <app>, button: <label>}")
                }
                step = .tap(app: name, button: button)
            },
            "type": { value, step in
                var fields: (app: String?, field: String?, text: String?)
                try KeyTable<(app: String?, field: String?, text: String?)>([
                    "app": { $1.app = try app($0) },
                    "field": { $1.field = try $0.string() },
                    "text": { $1.text = try $0.string() },
                ]).read(value, into: &fields)
                guard let name = fields.app, let field = fields.field, let text = fields.text else {
                    throw value.error("type needs {app: <app>, field: <name>, text: <text>}")
                }
                step = .type(app: name, field: field, text: text)
            },
            "waitFor": { value, step in
                typealias Fields = (
                    event: String?, attributes: [String: AttributeMatch], count: Int, timeout: Duration
                )
                var wait: Fields = (nil, [:], 1, .seconds(30))
                try KeyTable<Fields>([
                    "event": { $1.event = try $0.string() },
                    "where": { $1.attributes = try readAttributes($0) },
                    "count": { $1.count = try $0.int(range: InputBounds.count) },
                    "timeout": { $1.timeout = try $0.duration() },
                ]).read(value, into: &wait)
                guard let event = wait.event else { throw value.error("waitFor needs an 'event'") }
                step = .waitFor(
                    try known(EventPattern(kind: event, attributes: wait.attributes), value), count: wait.count,
                    timeout: wait.timeout)
            },
            "push": { value, step in
                // Parse's push body, passed on as JSON; these are the keys Parse takes.
                let fields = try value.mapping(
                    known: ["where", "channels", "data", "expiration_time", "expiration_interval", "push_time"])
                guard fields["data"] != nil else { throw value.error("a push needs 'data'") }
                step = .push(body: try JSONBox(try value.json()))
            },
            "network": { value, step in
                // A mapping changes links' conditions; a word changes the device's interface.
                if case .mapping = value.node {
                    step = .conditions(try readNetwork(value, profiles))
                    return
                }
                let network = try value.string()
                guard ["wifi", "cellular", "offline"].contains(network) else {
                    throw value.error(
                        "network must be wifi, cellular or offline, or a mapping such as {profile: EDGE} or {links: {parse-apns: down}}"
                    )
                }
                step = .network(network)
            },
        ])
        var step: Step?
        let found = try kinds.read(reader, into: &step)
        guard found.count == 1, let step else {
            throw reader.error("each step has exactly one of: \(kinds.keys.map(\.key).joined(separator: ", "))")
        }
        return step
    }
}
