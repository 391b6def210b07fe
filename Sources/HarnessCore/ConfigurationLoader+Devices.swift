import DeviceSimulator
import Foundation
import Yams

extension ConfigurationLoader {
    /// The prefix of a step on every device of a scenario (`each.launch: nasa-tv`).
    static let eachDevice = "each"
    /// The most devices a scenario may have: each runs its own apps' processes.
    static let mostDevices = 100

    /// A scenario's `devices`: a list of names, a mapping of names to device settings over the
    /// scenario's, or a number `N` (named `device-1` … `device-N`).
    static func readDevices(_ reader: YAMLReader, base: DeviceConfiguration) throws -> [ScenarioDevice] {
        var devices: [ScenarioDevice] = []
        func add(_ name: String, _ configuration: DeviceConfiguration, at item: YAMLReader) throws {
            if let problem = YAMLReader.problem(withName: name) { throw item.error(problem) }
            guard !name.contains("."), name != eachDevice else {
                throw item.error("'\(name)' cannot name a device: no '.', and '\(eachDevice)' means every device")
            }
            // Names are folders (state/devices/<name>): two that differ only in case are one on some disks.
            guard !devices.contains(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw item.error("'\(name)' is named twice (names differ in more than case)")
            }
            devices.append(ScenarioDevice(name: name, configuration: configuration))
        }
        switch reader.node {
        case .scalar:
            let count = try reader.int(range: 1...mostDevices)
            for number in 1...count { try add("device-\(number)", base, at: reader) }
        case .sequence:
            for item in try reader.sequence() { try add(try item.string(), base, at: item) }
        case .mapping:
            for (name, settings) in try reader.namedEntries() {
                let own = settings.node.null != nil ? base : try deviceKeys.overlay(settings, on: base)
                try add(name, own, at: settings)
            }
        case .alias:
            throw reader.error("YAML aliases are not supported here")
        }
        guard (1...mostDevices).contains(devices.count) else {
            throw reader.error("a scenario has 1 to \(mostDevices) devices")
        }
        return devices
    }

    /// A step of a scenario with `devices`: `alice.launch: app` on one, `each.launch: app` on every one
    /// in turn; waits, pushes and link changes name none. A scenario without `devices` names none.
    static func readScenarioStep(
        _ reader: YAMLReader, devices: [String], read: (YAMLReader) throws -> Step
    ) throws -> Step {
        let key: Node? =
            switch reader.node {
            case .scalar: reader.node
            case .mapping(let mapping) where mapping.count == 1: mapping.first?.key
            default: nil
            }
        guard let key, let text = key.string, let dot = text.firstIndex(of: "."),
            text[..<dot] == eachDevice || devices.contains(String(text[..<dot]))
        else {
            // No step's own key has a '.': this one names a device the scenario does not have.
            if let text = key?.string, let dot = text.firstIndex(of: ".") {
                let name = text[..<dot]
                throw reader.error(
                    devices.isEmpty
                        ? "'\(name)' is not a device of this scenario: declare devices with 'devices: [\(name), …]'"
                        : "'\(name)' is not a device of this scenario; its devices: \(devices.joined(separator: ", ")) "
                            + "(or \(eachDevice), for every one)")
            }
            let step = try read(reader)
            if step.actsOnADevice, !devices.isEmpty {
                throw reader.error(
                    "this scenario has devices (\(devices.joined(separator: ", "))): say which, as "
                        + "\(devices[0]).\(step.keyword) or \(eachDevice).\(step.keyword)")
            }
            return step
        }
        let device = String(text[..<dot])
        let rest = String(text[text.index(after: dot)...])
        let stripped: Node =
            switch reader.node {
            case .mapping(let mapping): .mapping(Node.Mapping([(Node(rest), mapping.first!.value)]))
            default: Node(rest)
            }
        let step = try read(YAMLReader(file: reader.file, node: stripped, path: reader.path))
        guard step.actsOnADevice else {
            throw reader.error("\(step.keyword) is not a step on a device: write it without '\(device).'")
        }
        return device == eachDevice ? .onEachDevice(step) : .on(device: device, step)
    }
}

extension Step {
    /// Whether the step acts on a device (a user's or the system's action on the phone), rather than
    /// on the run (a wait, a push through Parse, a change of the links).
    var actsOnADevice: Bool {
        switch self {
        case .waitFor, .push, .conditions: false
        default: true
        }
    }

    /// The step's key in harness.yml.
    var keyword: String {
        switch self {
        case .launch: "launch"
        case .home: "home"
        case .foreground: "foreground"
        case .crash: "crash"
        case .jetsam: "jetsam"
        case .forceQuit: "forceQuit"
        case .backgroundFetch: "backgroundFetch"
        case .tapNotification: "tapNotification"
        case .uninstall: "uninstall"
        case .tap: "tap"
        case .type: "type"
        case .lock: "lock"
        case .unlock: "unlock"
        case .reboot: "reboot"
        case .waitFor: "waitFor"
        case .network, .conditions: "network"
        case .push: "push"
        case .on(_, let step), .onEachDevice(let step): step.keyword
        }
    }
}
