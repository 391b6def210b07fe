import DeviceProtocol
import Foundation
import ParseModel

/// FakeParse's reading of requests, reachable by the fuzzer (`Sources/HarnessFuzzer`): a call's
/// envelope and route, a `where` query against a few installations with a find's options, the
/// installation dedupe rules and field operations, and a push's times, badge and payload, from any JSON a
/// client sends.
@_spi(Fuzzing) public enum FakeParseFuzzing {
    static let installations: [[String: JSONValue]] = [
        [
            "objectId": "a1", "deviceType": "ios", "deviceToken": .string(String(repeating: "a", count: 64)),
            "channels": ["news"], "badge": 3, "appIdentifier": "com.razeware.NASA-TV",
        ],
        [
            "objectId": "b2", "deviceType": "android", "channels": [], "badge": .number(1e300),
            "timeZone": "Europe/Paris",
        ],
        ["objectId": "c3", "deviceType": "ios", "badge": .number(-1.5), "installationId": .null],
    ]

    public static func push(_ bytes: [UInt8]) {
        guard let value = try? ParseJSON.decode(Data(bytes)), case .object(let object) = value else { return }
        _ = try? ParseRequest(method: "POST", path: ["batch"], headers: [:], query: [:], body: value)
        if let options = try? FindOptions(parameters: object) { _ = options.run(over: installations) }
        let clause = object["where"] ?? ["channels": ["$in": object["channels"] ?? []]]
        let targets = (try? ParseQuery(whereJSON: clause)).map { query in installations.filter(query.matches) } ?? []
        if let write = try? InstallationWrite(
            objectId: object["objectId"]?.stringValue, data: object, headerInstallationId: "h", isMaster: false),
            let changes = try? ObjectChanges(body: write.data)
        {
            _ = try? write.resolve(found: installations)
            for installation in installations { _ = changes.applied(to: installation) }
        }
        guard let push = try? PushRequest(body: object, now: 1_700_000_000) else { return }
        let template = ApplePushTemplate(data: push.data, badgePerInstallation: push.badge != nil)
        for installation in targets { _ = template.push(for: installation, expiration: push.expiration) }
    }
}
