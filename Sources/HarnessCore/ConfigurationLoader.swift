import FakeAPNs
import Foundation
import HarnessTimeline
import MediaServer
import Yams

/// Reads harness.yml strictly: unknown keys and bad values are errors with file, line and key path.
public enum ConfigurationLoader {
    public static func load(path: String) throws -> HarnessConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(
                file: path, line: nil, column: nil, keyPath: "",
                message: "cannot read the file: \(error.localizedDescription)")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws -> HarnessConfiguration {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw ConfigurationError(file: file, line: nil, column: nil, keyPath: "", message: "the file is empty")
            }
            root = node
        } catch let error as ConfigurationError {
            throw error
        } catch let error as YamlError {
            throw ConfigurationError(
                file: file, line: nil, column: nil, keyPath: "", message: "not valid YAML: \(error)")
        }
        let reader = YAMLReader(file: file, node: root, path: "")
        let top = try reader.mapping(known: ["version", "services", "apps", "scenarios"])
        guard let version = top["version"] else { throw reader.error("missing 'version: 1'") }
        guard try version.int() == 1 else { throw version.error("only version 1 is supported") }
        var configuration = HarnessConfiguration(file: file)
        if let services = top["services"] { configuration.services = try readServices(services) }
        if let apps = top["apps"] {
            for (name, app) in try apps.namedEntries() { configuration.apps[name] = try readApp(name, app) }
        }
        if let scenarios = top["scenarios"] {
            for (name, scenario) in try scenarios.namedEntries() {
                if let problem = YAMLReader.problem(withName: name) { throw scenario.error(problem) }
                configuration.scenarios.append(
                    try readScenario(name, scenario, apps: configuration.apps, device: configuration.services.device))
            }
        }
        return configuration
    }

    private static func readServices(_ reader: YAMLReader) throws -> ServicesConfiguration {
        var services = ServicesConfiguration()
        let entries = try reader.mapping(known: ["apns", "media", "parse", "device"])
        if let apns = try entries["apns"]?.mapping(known: [
            "port", "controlPort", "teamId", "keyId", "coalescingWindow",
        ]) {
            if let value = apns["coalescingWindow"] { services.apns.coalescingWindow = try value.duration() }
            if let value = apns["port"] { services.apns.port = try value.port() }
            if let value = apns["controlPort"] { services.apns.controlPort = try value.port() }
            if let value = apns["teamId"] { services.apns.teamId = try value.identifier() }
            if let value = apns["keyId"] { services.apns.keyId = try value.identifier() }
        }
        if let media = try entries["media"]?.mapping(known: [
            "port", "controlPort", "root", "throttle", "serverThrottle", "burst", "firstByteDelay", "latency", "faults",
        ]) {
            if let value = media["serverThrottle"] {
                services.media.serverThrottle = value.node.null != nil ? nil : try value.rate()
            }
            if let value = media["burst"] {
                services.media.burst = try value.int(range: 1...InputBounds.bytes.upperBound)
            }
            // The media server takes at most a day of delay before a response (docs/limits.md).
            if let value = media["firstByteDelay"] {
                services.media.firstByteDelay = try value.duration(atMost: .seconds(86_400))
            }
            if let value = media["latency"] { services.media.latency = try value.duration(atMost: .seconds(86_400)) }
            if let value = media["port"] { services.media.port = try value.port() }
            if let value = media["controlPort"] { services.media.controlPort = try value.port() }
            if let value = media["root"] { services.media.root = try value.string() }
            if let value = media["throttle"] {
                services.media.throttle = value.node.null != nil ? nil : try value.rate()
            }
            if let value = media["faults"] { services.media.faults = try readFaults(value) }
        }
        if let parse = try entries["parse"]?.mapping(
            known: ["port", "applicationId", "clientKey", "restAPIKey", "masterKey"])
        {
            if let value = parse["port"] { services.parse.port = try value.port() }
            if let value = parse["applicationId"] { services.parse.applicationId = try value.string() }
            if let value = parse["clientKey"] { services.parse.clientKey = try value.string() }
            if let value = parse["restAPIKey"] { services.parse.restAPIKey = try value.string() }
            if let value = parse["masterKey"] { services.parse.masterKey = try value.string() }
        }
        if let device = entries["device"] { services.device = try readDevice(device, base: services.device) }
        return services
    }

    /// A list of media faults, each a mapping with the keys of docs/media-control-api.md.
    private static func readFaults(_ reader: YAMLReader) throws -> [MediaFault] {
        try reader.sequence().map { item in
            let entries = try item.mapping(known: [
                "fault", "path", "count", "probability", "seed", "afterBytes", "afterFraction", "by", "status",
                "retryAfter",
            ])
            guard let kindReader = entries["fault"] else {
                throw item.error(
                    "a fault needs 'fault': one of \(MediaFault.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard let kind = MediaFault.Kind(rawValue: try kindReader.string()) else {
                throw kindReader.error(
                    "unknown fault '\(try kindReader.string())'; known: \(MediaFault.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            var fault = MediaFault(kind, path: try entries["path"]?.string(), count: try entries["count"]?.int())
            fault.probability = try entries["probability"]?.fraction()
            fault.seed = try entries["seed"].map { UInt64(try $0.int(range: 0...Int.max)) }
            fault.afterBytes = try entries["afterBytes"]?.int()
            fault.afterFraction = try entries["afterFraction"]?.fraction()
            fault.by = try entries["by"]?.int()
            fault.status = try entries["status"]?.int()
            fault.retryAfter = try entries["retryAfter"]?.int()
            if let problem = fault.problem { throw item.error(problem) }
            return fault
        }
    }

    private static func readDevice(_ reader: YAMLReader, base: DeviceSettings) throws -> DeviceSettings {
        var settings = base
        let entries = try reader.mapping(known: [
            "backgroundPushBudget", "suspendAfterBackground", "launchTimeout", "transferRequestTimeout",
            "transferResourceTimeout", "transferRetryDelay", "backgroundAppRefresh", "lowPowerMode", "pushBudget",
            "timeScale", "bootLaunchDelay", "sessionLaunchDelay", "backgroundTimeAllowance",
        ])
        if let value = entries["backgroundPushBudget"] { settings.backgroundPushBudget = try value.duration() }
        if let value = entries["suspendAfterBackground"] { settings.suspendAfterBackground = try value.duration() }
        if let value = entries["launchTimeout"] { settings.launchTimeout = try value.duration() }
        if let value = entries["transferRequestTimeout"] { settings.transfers.requestTimeout = try value.duration() }
        if let value = entries["transferResourceTimeout"] { settings.transfers.resourceTimeout = try value.duration() }
        if let value = entries["transferRetryDelay"] { settings.transfers.retryDelay = try value.duration() }
        if let value = entries["backgroundAppRefresh"] { settings.pushPolicy.backgroundAppRefresh = try value.bool() }
        if let value = entries["lowPowerMode"] { settings.pushPolicy.lowPowerMode = try value.bool() }
        if let value = entries["bootLaunchDelay"] { settings.bootLaunchDelay = try value.duration() }
        if let value = entries["sessionLaunchDelay"] { settings.sessionLaunchDelay = try value.duration() }
        if let value = entries["backgroundTimeAllowance"] { settings.backgroundTimeAllowance = try value.duration() }
        if let value = entries["timeScale"] {
            guard let scale = Double(try value.string()), scale > 0, scale <= 1000 else {
                throw value.error("timeScale is a positive number of real seconds per policy second, such as 0.1")
            }
            settings.timeScale = scale
        }
        if let value = entries["pushBudget"] {
            if case .scalar = value.node {
                guard try value.string() == "permissive" else {
                    throw value.error("pushBudget is 'permissive' or {perHour: N, perDay: N}")
                }
                settings.pushPolicy.wakesPerHour = nil
                settings.pushPolicy.wakesPerDay = nil
            } else {
                let budget = try value.mapping(known: ["perHour", "perDay"])
                for (key, entry) in budget {
                    let count = try entry.int(range: 0...1_000_000)
                    if key == "perHour" {
                        settings.pushPolicy.wakesPerHour = count
                    } else {
                        settings.pushPolicy.wakesPerDay = count
                    }
                }
            }
        }
        return settings
    }

    private static func readApp(_ name: String, _ reader: YAMLReader) throws -> AppConfiguration {
        let entries = try reader.mapping(known: ["bundleId", "build", "command", "backgroundModes", "environment"])
        guard let bundleId = entries["bundleId"] else { throw reader.error("an app needs a 'bundleId'") }
        guard let command = entries["command"] else { throw reader.error("an app needs a 'command' (a list)") }
        let arguments = try command.strings()
        guard !arguments.isEmpty else { throw command.error("the command must not be empty") }
        // The bundle id names the app's container folder and its push certificates' files.
        let bundle = try bundleId.string()
        if let problem = PushCertificateIssuer.problem(bundleId: bundle) { throw bundleId.error(problem) }
        var app = AppConfiguration(
            name: name, bundleId: bundle, build: try entries["build"]?.strings(), command: arguments,
            backgroundModes: Set(try entries["backgroundModes"]?.strings() ?? []))
        let knownModes: Set<String> = ["remote-notification", "fetch", "audio", "location", "voip", "processing"]
        if let modes = entries["backgroundModes"], let unknown = app.backgroundModes.subtracting(knownModes).first {
            throw modes.error(
                "unknown background mode '\(unknown)'; known: \(knownModes.sorted().joined(separator: ", "))")
        }
        if let environment = entries["environment"] {
            for (key, value) in try environment.namedEntries() { app.environment[key] = try value.string() }
        }
        return app
    }

    private static func readScenario(
        _ name: String, _ reader: YAMLReader, apps: [String: AppConfiguration], device base: DeviceSettings
    ) throws -> Scenario {
        let entries = try reader.mapping(known: ["description", "apns", "media", "device", "steps", "expect"])
        var scenario = Scenario(name: name)
        if let value = entries["description"] { scenario.description = try value.string() }
        if let apns = try entries["apns"]?.mapping(known: ["coalescingWindow"]), let window = apns["coalescingWindow"] {
            scenario.coalescingWindow = try window.duration()
        }
        if let media = try entries["media"]?.mapping(known: ["throttle", "faults"]) {
            if let throttle = media["throttle"] {
                scenario.mediaThrottle = .set(throttle.node.null != nil ? nil : try throttle.rate())
            }
            if let faults = media["faults"] { scenario.mediaFaults = try readFaults(faults) }
        }
        // A scenario's device block overrides the services' one key by key.
        if let device = entries["device"] { scenario.device = try readDevice(device, base: base) }
        guard let steps = entries["steps"] else { throw reader.error("a scenario needs 'steps'") }
        scenario.steps = try steps.sequence().map { try readStep($0, apps: apps) }
        if let expect = entries["expect"] { scenario.expectation = try readExpectation(expect) }
        return scenario
    }

    private static func readStep(_ reader: YAMLReader, apps: [String: AppConfiguration]) throws -> Step {
        if case .scalar = reader.node {
            switch try reader.string() {
            case "lock": return .lock
            case "unlock": return .unlock
            case "reboot": return .reboot
            case let other:
                throw reader.error("'\(other)' is not a step; steps without a value are lock, unlock and reboot")
            }
        }
        let kinds = [
            "launch", "home", "foreground", "crash", "jetsam", "forceQuit", "backgroundFetch", "tapNotification",
            "uninstall", "tap", "waitFor",
            "push", "network",
        ]
        let entries = try reader.mapping(known: Set(kinds))
        guard entries.count == 1, let (kind, value) = entries.first else {
            throw reader.error("each step has exactly one of: \(kinds.joined(separator: ", "))")
        }
        func app() throws -> String {
            let name = try value.string()
            guard apps[name] != nil else {
                throw value.error("no app named '\(name)'; apps: \(apps.keys.sorted().joined(separator: ", "))")
            }
            return name
        }
        switch kind {
        case "launch": return .launch(app: try app())
        case "home": return .home(app: try app())
        case "foreground": return .foreground(app: try app())
        case "crash": return .crash(app: try app())
        case "jetsam": return .jetsam(app: try app())
        case "forceQuit": return .forceQuit(app: try app())
        case "backgroundFetch": return .backgroundFetch(app: try app())
        case "tapNotification": return .tapNotification(app: try app())
        case "uninstall": return .uninstall(app: try app())
        case "tap":
            let fields = try value.mapping(known: ["app", "button"])
            guard let name = fields["app"], let button = fields["button"] else {
                throw value.error("tap needs {app: <app>, button: <label>}")
            }
            let appName = try name.string()
            guard apps[appName] != nil else {
                throw name.error("no app named '\(appName)'; apps: \(apps.keys.sorted().joined(separator: ", "))")
            }
            return .tap(app: appName, button: try button.string())
        case "network":
            let network = try value.string()
            guard ["wifi", "cellular", "offline"].contains(network) else {
                throw value.error("network must be wifi, cellular or offline")
            }
            return .network(network)
        case "push":
            let fields = try value.mapping(
                known: ["where", "channels", "data", "expiration_time", "expiration_interval", "push_time"])
            guard fields["data"] != nil else { throw value.error("a push needs 'data'") }
            return .push(body: try JSONBox(try value.json()))
        default:
            let fields = try value.mapping(known: ["event", "where", "timeout"])
            guard let event = fields["event"] else { throw value.error("waitFor needs an 'event'") }
            var pattern = EventPattern(kind: try event.string())
            if let attributes = fields["where"] { pattern.attributes = try readAttributes(attributes) }
            return .waitFor(pattern, timeout: try fields["timeout"]?.duration() ?? .seconds(30))
        }
    }

    private static func readPattern(_ reader: YAMLReader) throws -> EventPattern {
        if case .scalar = reader.node { return EventPattern(kind: try reader.string()) }
        let entries = try reader.namedEntries()
        guard entries.count == 1, let (kind, attributes) = entries.first else {
            throw reader.error("write an event as its kind, or as 'kind: {attribute: value}'")
        }
        return EventPattern(kind: kind, attributes: try readAttributes(attributes))
    }

    private static func readAttributes(_ reader: YAMLReader) throws -> [String: AttributeMatch] {
        var result: [String: AttributeMatch] = [:]
        for (key, value) in try reader.namedEntries() {
            if case .mapping = value.node {
                let match = try value.mapping(known: ["sha256OfFixture", "contains", "json"])
                if let fixture = match["sha256OfFixture"], match.count == 1 {
                    result[key] = .sha256OfFixture(try fixture.string())
                } else if let text = match["contains"], match.count == 1 {
                    result[key] = .contains(try text.string())
                } else if let json = match["json"], match.count == 1 {
                    guard case .mapping = json.node else {
                        throw json.error("write the keys the JSON object must hold, as {json: {photoTitle: Nebula}}")
                    }
                    result[key] = .json(try readJSONSubset(json))
                } else {
                    throw value.error(
                        "write {sha256OfFixture: photos/dailyphoto.jpg}, {contains: text} or {json: {key: value}}")
                }
            } else {
                result[key] = .equals(try value.string())
            }
        }
        return result
    }

    private static func readJSONSubset(_ reader: YAMLReader) throws -> JSONSubset {
        if case .mapping = reader.node {
            return .object(try reader.namedEntries().map { (key: $0.0, value: try readJSONSubset($0.1)) })
        }
        return .scalar(try reader.string())
    }

    private static func readExpectation(_ reader: YAMLReader) throws -> Expectation {
        let entries = try reader.mapping(known: ["chain", "eventually", "never", "counts", "files", "within", "settle"])
        var expectation = Expectation()
        if let chain = entries["chain"] { expectation.chain = try chain.sequence().map(readPattern) }
        if let eventually = entries["eventually"] {
            expectation.eventually = try eventually.sequence().map(readPattern)
        }
        if let never = entries["never"] { expectation.never = try never.sequence().map(readPattern) }
        if let within = entries["within"] { expectation.within = try within.duration() }
        if let settle = entries["settle"] { expectation.settle = try settle.duration() }
        if let counts = entries["counts"] {
            expectation.counts = try counts.sequence().map { item in
                let fields = try item.mapping(known: ["event", "where", "count", "atLeast", "atMost"])
                guard let event = fields["event"] else { throw item.error("a count needs an 'event'") }
                var pattern = EventPattern(kind: try event.string())
                if let attributes = fields["where"] { pattern.attributes = try readAttributes(attributes) }
                if let exact = fields["count"] {
                    guard fields["atLeast"] == nil, fields["atMost"] == nil else {
                        throw item.error("a count has either 'count' or 'atLeast'/'atMost'")
                    }
                    let count = try exact.int(range: 0...1_000_000)
                    return CountExpectation(pattern: pattern, atLeast: count, atMost: count)
                }
                guard fields["atLeast"] != nil || fields["atMost"] != nil else {
                    throw item.error("a count needs 'count', 'atLeast' or 'atMost'")
                }
                let low = try fields["atLeast"]?.int(range: 0...1_000_000) ?? 0
                let high = try fields["atMost"]?.int(range: 0...1_000_000)
                if let high, high < low { throw item.error("atMost (\(high)) is below atLeast (\(low))") }
                return CountExpectation(pattern: pattern, atLeast: low, atMost: high)
            }
        }
        if let files = entries["files"] {
            expectation.files = try files.sequence().map { item in
                let fields = try item.mapping(known: ["path", "sha256OfFixture"])
                guard let path = fields["path"] else { throw item.error("a file expectation needs a 'path'") }
                return FileExpectation(
                    path: try path.relativePath(), sha256OfFixture: try fields["sha256OfFixture"]?.relativePath())
            }
        }
        return expectation
    }
}
