import DeviceProtocol
import DeviceSimulator
import Foundation
import MediaServer
import NetworkConditions

/// harness.yml, version 1: the services, the apps under test and the scenarios. Defaults live here.
public struct HarnessConfiguration: Sendable {
    public var file: String
    public var services: ServicesConfiguration
    public var apps: [String: AppConfiguration] = [:]
    /// Servers under test, in file order; a scenario starts those it names.
    public var backends: [BackendConfiguration] = []
    /// In file order, so `harness list` shows them as written.
    public var scenarios: [Scenario] = []

    /// The defaults, for a file in `baseDirectory`.
    public init(file: String, baseDirectory: URL) {
        self.file = file
        services = ServicesConfiguration(baseDirectory: baseDirectory)
    }

    public func scenario(named name: String) -> Scenario? { scenarios.first { $0.name == name } }

    public func backend(named name: String) -> BackendConfiguration? { backends.first { $0.name == name } }

    /// Port 0 for every service, and a free port chosen by the run for every backend with a port: runs
    /// that overlap never collide. A backend must then listen where `HARNESS_PORT` says.
    public mutating func useEphemeralPorts() {
        services.useEphemeralPorts()
        for index in backends.indices where backends[index].port != nil { backends[index].port = .free }
    }
}

public struct AppConfiguration: Sendable {
    public var name: String
    public var bundleId: String
    /// Run once before the first launch (e.g. `swift build --product nasa-tv`).
    public var build: [String]?
    public var command: [String]
    public var backgroundModes: Set<String>
    public var environment: [String: String] = [:]
}

/// A scenario's setting for something the services set too: theirs, or its own (which may be "none").
public enum Override<Value: Sendable>: Sendable {
    case inherit
    case set(Value)
}

/// One scenario: what to do, and what must be seen.
public struct Scenario: Sendable {
    public var name: String
    public var description: String = ""
    /// Per-scenario overrides of the services' settings: the media throttle (`null`: none in this scenario).
    public var mediaThrottle = Override<Int?>.inherit
    /// Added after the services' own fault rules.
    public var mediaFaults: [MediaFault] = []
    public var coalescingWindow: Duration?
    /// The backends it starts, by name, in this order, before its first step.
    public var backends: [String] = []
    public var device: DeviceConfiguration?
    /// Its named devices, in the order declared; none for a scenario with the one device, unnamed.
    public var devices: [ScenarioDevice] = []
    /// Over the services' network: its profile for theirs, its links' settings for theirs.
    public var network = NetworkSettings()
    public var steps: [Step] = []
    public var expectation = Expectation()
    /// The network profiles under which the scenario is known to fail, by name, each with why.
    public var expectedFailures: [(profile: String, why: String)] = []
    /// Set on a matrix cell: the scenario it comes from and the profile it runs under.
    public var cell: MatrixCell?

    /// The services as this scenario runs them: its device block, coalescing window and media throttle
    /// in place of theirs, its media faults after theirs.
    public func overlay(on services: ServicesConfiguration) -> ServicesConfiguration {
        var services = services
        if let device { services.device = device }
        services.namedDevices = devices
        if let coalescingWindow { services.apns.delivery.coalescingWindow = coalescingWindow }
        if case .set(let throttle) = mediaThrottle { services.media.throttleBytesPerSecond = throttle }
        services.media.faults += mediaFaults
        services.network = services.network.overlaid(by: network)
        for step in steps {
            if case .conditions(let change) = step { services.networkLinksInPlay.formUnion(change.touched) }
        }
        return services
    }

    /// This scenario as a cell of a network matrix: named `name[profile]`, with `profile` (or none) on
    /// the device's links in place of its own; its links' own settings stay.
    public func under(profile: NetworkProfile?) -> Scenario {
        var cell = self
        let column = profile?.name ?? "none"
        cell.name = "\(name)[\(column)]"
        cell.network.profile = profile.map { .some($0) } ?? .none
        cell.cell = MatrixCell(scenario: name, profile: column)
        return cell
    }

    /// A run's outcome as the matrix counts it: a cell that fails under a profile the scenario says it
    /// fails under is an expected failure, and one that passes there is the surprise, a failure.
    public func judged(_ outcome: RunOutcome) -> RunOutcome {
        guard let cell, let expected = expectedFailures.first(where: { $0.profile == cell.profile }) else {
            return outcome
        }
        switch outcome {
        case .failed(let message):
            return .expectedFailure("expected to fail under \(cell.profile) (\(expected.why)): \(message)")
        case .passed:
            return .failed("passed under \(cell.profile), where it is expected to fail (\(expected.why))")
        default:
            return outcome
        }
    }

    /// The app of the first `launch` step.
    public var launchedApp: String? {
        for step in steps { if case .launch(let app) = step.action { return app } }
        return nil
    }

    /// The names of its devices: those it declares, or the one device's.
    public var deviceNames: [String] { devices.isEmpty ? [ScenarioDevice.single] : devices.map(\.name) }
}

/// One of a scenario's named devices: a phone of its own, with its apps, state, network and
/// notifications, its events on the timeline carrying `device: <name>`.
public struct ScenarioDevice: Sendable {
    /// The name of the device of a scenario that declares none (its events carry no `device`).
    public static let single = "device"

    public var name: String
    /// The scenario's device settings with this device's own over them.
    public var configuration: DeviceConfiguration

    public init(name: String, configuration: DeviceConfiguration) {
        self.name = name
        self.configuration = configuration
    }
}

public enum Step: Sendable, CustomStringConvertible {
    case launch(app: String)
    case home(app: String)
    case foreground(app: String)
    /// The app crashes (`SIGKILL`); it stays eligible for background launches.
    case crash(app: String)
    /// The system terminates the app (memory pressure); eligible for background launches.
    case jetsam(app: String)
    /// The user swipes the app away: no background launches, background transfers cancelled.
    case forceQuit(app: String)
    /// The system decides to run a background fetch for the app (if its settings allow one).
    case backgroundFetch(app: String)
    /// The user taps the app's newest notification: the app comes to the foreground and gets the response.
    case tapNotification(app: String)
    /// The user deletes the app: APNs answers its token with 410 Unregistered from then on.
    case uninstall(app: String)
    /// The user taps a button on the app's screen, by its label.
    case tap(app: String, button: String)
    /// The user types `text` into a field of the app's screen, by its name.
    case type(app: String, field: String, text: String)
    /// The side button: the app on screen goes to the background; nothing comes to the foreground.
    case lock
    case unlock
    /// The device restarts: every app ends, force-quit apps become eligible again, it comes back locked.
    case reboot
    /// Waits until `count` events matching the pattern have happened (since the run began).
    case waitFor(EventPattern, count: Int = 1, timeout: Duration)
    /// The device's network: `wifi`, `cellular` or `offline`.
    case network(String)
    /// Links' conditions change: a profile on the device's links, single links' settings.
    case conditions(NetworkSettings)
    /// `POST /parse/push` with the master key; `body` is Parse's push body (`where`/`channels`, `data`).
    case push(body: JSONBox)
    /// A step on one of the scenario's named devices (`alice.launch: pushchat`).
    indirect case on(device: String, Step)
    /// A step on every device of the scenario, one after the other in the order they are declared
    /// (`each.launch: nasa-tv`).
    indirect case onEachDevice(Step)

    /// The step itself, whichever device it is on.
    public var action: Step {
        switch self {
        case .on(_, let step), .onEachDevice(let step): step.action
        default: self
        }
    }

    /// The same step acting on `other` where it acts on `app`.
    public func replacingApp(_ app: String, with other: String) -> Step {
        func swap(_ name: String) -> String { name == app ? other : name }
        switch self {
        case .launch(let name): return .launch(app: swap(name))
        case .home(let name): return .home(app: swap(name))
        case .foreground(let name): return .foreground(app: swap(name))
        case .crash(let name): return .crash(app: swap(name))
        case .jetsam(let name): return .jetsam(app: swap(name))
        case .forceQuit(let name): return .forceQuit(app: swap(name))
        case .backgroundFetch(let name): return .backgroundFetch(app: swap(name))
        case .tapNotification(let name): return .tapNotification(app: swap(name))
        case .uninstall(let name): return .uninstall(app: swap(name))
        case .tap(let name, let button): return .tap(app: swap(name), button: button)
        case .type(let name, let field, let text): return .type(app: swap(name), field: field, text: text)
        case .on(let device, let step): return .on(device: device, step.replacingApp(app, with: other))
        case .onEachDevice(let step): return .onEachDevice(step.replacingApp(app, with: other))
        case .waitFor, .network, .conditions, .push, .lock, .unlock, .reboot: return self
        }
    }

    /// The app the step acts on, if any.
    public var app: String? {
        switch self {
        case .launch(let app), .home(let app), .foreground(let app), .crash(let app), .jetsam(let app),
            .forceQuit(let app), .backgroundFetch(let app), .tapNotification(let app), .uninstall(let app),
            .tap(let app, _), .type(let app, _, _):
            app
        case .on(_, let step), .onEachDevice(let step): step.app
        case .waitFor, .network, .conditions, .push, .lock, .unlock, .reboot: nil
        }
    }

    public var description: String {
        switch self {
        case .launch(let app): "launch \(app)"
        case .home(let app): "home \(app)"
        case .foreground(let app): "foreground \(app)"
        case .crash(let app): "crash \(app)"
        case .jetsam(let app): "jetsam \(app)"
        case .forceQuit(let app): "forceQuit \(app)"
        case .backgroundFetch(let app): "backgroundFetch \(app)"
        case .tapNotification(let app): "tapNotification \(app)"
        case .uninstall(let app): "uninstall \(app)"
        case .tap(let app, let button): "tap \(button) in \(app)"
        case .type(let app, let field, let text): "type \"\(text)\" into \(field) in \(app)"
        case .lock: "lock"
        case .unlock: "unlock"
        case .reboot: "reboot"
        case .waitFor(let pattern, let count, let timeout):
            "waitFor \(count == 1 ? "" : "\(count)× ")\(pattern) (\(timeout))"
        case .push: "push through Parse"
        case .network(let network): "network \(network)"
        case .conditions(let change): "network \(change.description)"
        case .on(let device, let step): "\(device): \(step)"
        case .onEachDevice(let step): "each device: \(step)"
        }
    }
}

/// A JSON value read from YAML, carried as serialised text so that it is `Sendable`.
public struct JSONBox: Sendable {
    public let data: Data
    init(_ object: Any) throws { data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) }
}

/// An event kind and attribute values it must carry.
public struct EventPattern: Sendable, CustomStringConvertible {
    public var kind: String
    public var attributes: [String: AttributeMatch] = [:]

    public init(kind: String, attributes: [String: AttributeMatch] = [:]) {
        self.kind = kind
        self.attributes = attributes
    }

    public var description: String {
        attributes.isEmpty
            ? kind
            : "\(kind) {"
                + attributes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
    }
}

public enum AttributeMatch: Sendable, CustomStringConvertible {
    case equals(String)
    /// The attribute contains this text (for JSON payloads and messages).
    case contains(String)
    /// The SHA-256 of a file under the media root, compared with the attribute.
    case sha256OfFixture(String)
    /// The attribute is a JSON object (a push payload) holding these keys with these values, nested
    /// objects alike; other keys may be there too.
    case json(JSONSubset)

    public var description: String {
        switch self {
        case .equals(let value): value
        case .contains(let text): "contains \"\(text)\""
        case .sha256OfFixture(let path): "sha256 of \(path)"
        case .json(let subset): "JSON with \(subset)"
        }
    }
}

/// Part of a JSON value that an expectation asks for: an object's keys, each with the value it must
/// have; a scalar compares as written in YAML (`1` matches the number 1, `true` the boolean).
public indirect enum JSONSubset: Sendable, CustomStringConvertible {
    case object([(key: String, value: JSONSubset)])
    case scalar(String)

    public func matches(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.object(let entries), .object(let object)):
            return entries.allSatisfy { entry in object[entry.key].map { entry.value.matches($0) } ?? false }
        case (.scalar(let expected), .string(let text)): return text == expected
        case (.scalar(let expected), .bool(let flag)): return String(flag) == expected
        case (.scalar(let expected), .number(let number)): return Double(expected) == number
        case (.scalar(let expected), .null): return expected == "null" || expected == "~"
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .object(let entries): "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .scalar(let text): text
        }
    }
}

/// What the run must show: a chain of events in order, events that must never happen, and files the
/// app must have left in its container.
public struct Expectation: Sendable {
    public var chain: [EventPattern] = []
    /// Events that must each happen, in any order.
    public var eventually: [EventPattern] = []
    public var never: [EventPattern] = []
    /// How many times events may happen, checked when the run ends.
    public var counts: [CountExpectation] = []
    public var files: [FileExpectation] = []
    /// How long after the last step the chain may take to complete.
    public var within: Duration = .seconds(60)
    /// Once everything else is met, how long to keep watching for `never` events and counts overrun.
    public var settle: Duration = .zero

    public init() {}
}

/// "This event happens exactly / at least / at most so many times."
public struct CountExpectation: Sendable, CustomStringConvertible {
    public var pattern: EventPattern
    public var atLeast: Int
    public var atMost: Int?

    public var description: String {
        switch (atLeast, atMost) {
        case (let low, let high?) where low == high: "\(pattern) exactly \(low) time\(low == 1 ? "" : "s")"
        case (let low, let high?): "\(pattern) \(low) to \(high) times"
        case (let low, nil): "\(pattern) at least \(low) time\(low == 1 ? "" : "s")"
        }
    }

    public func holds(_ count: Int) -> Bool { count >= atLeast && count <= (atMost ?? .max) }
}

public struct FileExpectation: Sendable {
    /// Relative to the app's container home.
    public var path: String
    public var sha256OfFixture: String?
    /// The device whose container is looked in, in a scenario with several; nil: the first.
    public var device: String?
}
