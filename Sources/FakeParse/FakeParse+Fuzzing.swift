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

    /// Installations with long text fields, for `where` clauses with `$regex`: the budget of steps, not
    /// the pattern, bounds what a match costs.
    static let texts: [[String: JSONValue]] = [
        ["objectId": "t1", "x": .string(String(repeating: "a", count: 40) + "!"), "deviceType": "ios"],
        ["objectId": "t2", "x": .string(String(repeating: "ab", count: 9_000)), "tags": ["aaa", "é\u{301}", ""]],
        ["objectId": "t3", "x": .string(String(repeating: "\n", count: 100) + String(repeating: "x", count: 5_000))],
    ]

    /// A `where` clause (the bytes as its JSON): compiled, then matched against installations whose fields
    /// are long enough for a backtracking `$regex` to run out of its budget.
    public static func whereClause(_ bytes: [UInt8]) {
        guard let value = try? ParseJSON.decode(Data(bytes)), let query = try? ParseQuery(whereJSON: value) else {
            return
        }
        _ = try? query.filter(texts + installations)
    }

    public static func push(_ bytes: [UInt8]) {
        guard let value = try? ParseJSON.decode(Data(bytes)), case .object(let object) = value else { return }
        _ = try? ParseRequest(method: "POST", path: ["batch"], headers: [:], query: [:], body: value)
        if let options = try? FindOptions(parameters: object) { _ = try? options.run(over: installations) }
        let clause = object["where"] ?? ["channels": ["$in": object["channels"] ?? []]]
        let targets = (try? ParseQuery(whereJSON: clause)).flatMap { query in try? query.filter(installations) } ?? []
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
