import DeviceSimulator
import FakeAPNs
import FakeParse
import Foundation
import HarnessTimeline
import MediaServer

/// harness.yml's `services`, each key read into the library's own configuration.
extension ConfigurationLoader {
    static func servicesKeys(baseDirectory: URL) -> KeyTable<ServicesConfiguration> {
        KeyTable([
            "apns": { try apnsKeys.read($0, into: &$1.apns) },
            "media": { try mediaKeys(baseDirectory: baseDirectory).read($0, into: &$1.media) },
            "parse": { try parseKeys.read($0, into: &$1.parse) },
            "device": { try deviceKeys.read($0, into: &$1.device) },
            "network": { try servicesNetworkKeys.read($0, into: &$1) },
        ])
    }

    static var apnsKeys: KeyTable<FakeAPNsConfiguration> {
        KeyTable([
            "port": { $1.port = try $0.port() },
            "controlPort": { $1.controlPort = try $0.port() },
            "legacyPort": { $1.legacyPort = try $0.nullOr { try $0.port() } },
            "feedbackPort": { $1.feedbackPort = try $0.nullOr { try $0.port() } },
            "teamId": { $1.teamId = try $0.identifier() },
            "keyId": { $1.keyId = try $0.identifier() },
            "coalescingWindow": { $1.delivery.coalescingWindow = try $0.duration() },
            "deliveryCommand": { value, apns in
                let command = try value.strings()
                guard !command.isEmpty else { throw value.error("the command must not be empty") }
                apns.deliveryCommand = command
            },
        ])
    }

    /// The media root is relative to harness.yml's folder. The media server takes at most a day of
    /// delay before a response (docs/limits.md).
    static func mediaKeys(baseDirectory: URL) -> KeyTable<MediaServerConfiguration> {
        KeyTable([
            "port": { $1.port = try $0.port() },
            "controlPort": { $1.controlPort = try $0.port() },
            "root": { $1.root = URL(fileURLWithPath: try $0.string(), relativeTo: baseDirectory).standardizedFileURL },
            "throttle": { $1.throttleBytesPerSecond = try $0.nullOr { try $0.rate() } },
            "serverThrottle": { $1.settings.serverBytesPerSecond = try $0.nullOr { try $0.rate() } },
            "burst": { $1.settings.burstBytes = try $0.nullOr { try $0.int(range: 1...InputBounds.bytes.upperBound) } },
            "firstByteDelay": {
                $1.settings.firstByteDelayMilliseconds = try $0.milliseconds(atMost: .seconds(86_400))
            },
            "latency": { $1.settings.latencyMilliseconds = try $0.milliseconds(atMost: .seconds(86_400)) },
            "faults": { $1.faults = try readFaults($0) },
        ])
    }

    static var parseKeys: KeyTable<FakeParseConfiguration> {
        KeyTable([
            "port": { $1.port = try $0.port() },
            "applicationId": { $1.applicationId = try $0.string() },
            "clientKey": { $1.clientKey = try $0.string() },
            "restAPIKey": { $1.restAPIKey = try $0.string() },
            "masterKey": { $1.masterKey = try $0.string() },
            "cleanupInvalidInstallations": { $1.cleanupInvalidInstallations = try $0.bool() },
        ])
    }

    /// A list of media faults, each a mapping with the keys of docs/media-control-api.md.
    static func readFaults(_ reader: YAMLReader) throws -> [MediaFault] {
        let kinds = MediaFault.Kind.allCases.map(\.rawValue).joined(separator: ", ")
        let keys = KeyTable<MediaFault>([
            "fault": { kind, fault in
                guard let known = MediaFault.Kind(rawValue: try kind.string()) else {
                    throw kind.error("unknown fault '\(try kind.string())'; known: \(kinds)")
                }
                fault.fault = known
            },
            "path": { $1.path = try $0.string() },
            "count": { $1.count = try $0.int() },
            "probability": { $1.probability = try $0.fraction() },
            "seed": { $1.seed = UInt64(try $0.int(range: 0...Int.max)) },
            "afterBytes": { $1.afterBytes = try $0.int() },
            "afterFraction": { $1.afterFraction = try $0.fraction() },
            "by": { $1.by = try $0.int() },
            "status": { $1.status = try $0.int() },
            "retryAfter": { $1.retryAfter = try $0.int() },
        ])
        return try reader.sequence().map { item in
            // The kind is set from `fault`, which every rule must have.
            var fault = MediaFault(.status)
            guard try keys.read(item, into: &fault).contains("fault") else {
                throw item.error("a fault needs 'fault': one of \(kinds)")
            }
            if let problem = fault.problem { throw item.error(problem) }
            return fault
        }
    }

    static var deviceKeys: KeyTable<DeviceConfiguration> {
        KeyTable([
            "backgroundPushBudget": { $1.backgroundPushBudget = try $0.duration() },
            "suspendAfterBackground": { $1.suspendAfterBackground = try $0.duration() },
            "launchTimeout": { $1.launchTimeout = try $0.duration() },
            "transferRequestTimeout": { $1.transfers.requestTimeout = try $0.duration() },
            "transferResourceTimeout": { $1.transfers.resourceTimeout = try $0.duration() },
            "transferRetryDelay": { $1.transfers.retryDelay = try $0.duration() },
            "backgroundAppRefresh": { $1.pushPolicy.backgroundAppRefresh = try $0.bool() },
            "lowPowerMode": { $1.pushPolicy.lowPowerMode = try $0.bool() },
            "pushBudget": { try readPushBudget($0, into: &$1.pushPolicy) },
            "timeScale": { value, device in
                guard let scale = Double(try value.string()), scale > 0, scale <= 1000 else {
                    throw value.error("timeScale is a positive number of real seconds per policy second, such as 0.1")
                }
                device.timeScale = scale
            },
            "bootLaunchDelay": { $1.bootLaunchDelay = try $0.duration() },
            "sessionLaunchDelay": { $1.sessionLaunchDelay = try $0.duration() },
            "backgroundTimeAllowance": { $1.backgroundTimeAllowance = try $0.duration() },
        ])
    }

    /// `permissive`, or `{perHour: N, perDay: N}`.
    static func readPushBudget(_ value: YAMLReader, into policy: inout PushPolicy) throws {
        guard case .scalar = value.node else {
            try KeyTable<PushPolicy>([
                "perHour": { $1.wakesPerHour = try $0.int(range: 0...1_000_000) },
                "perDay": { $1.wakesPerDay = try $0.int(range: 0...1_000_000) },
            ]).read(value, into: &policy)
            return
        }
        guard try value.string() == "permissive" else {
            throw value.error("pushBudget is 'permissive' or {perHour: N, perDay: N}")
        }
        policy.wakesPerHour = nil
        policy.wakesPerDay = nil
    }
}
