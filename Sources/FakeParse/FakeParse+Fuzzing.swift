import Foundation

/// FakeParse's reading of a push request, reachable by the fuzzer (`Sources/HarnessFuzzer`): the
/// `where` query against a few installations, the expiration, and the payload with its badge, from
/// any JSON a client sends.
@_spi(Fuzzing) public enum FakeParseFuzzing {
    nonisolated(unsafe) static let installations: [[String: Any]] = [
        [
            "objectId": "a1", "deviceType": "ios", "deviceToken": String(repeating: "a", count: 64),
            "channels": ["news"],
            "badge": 3, "appIdentifier": "com.razeware.NASA-TV",
        ],
        ["objectId": "b2", "deviceType": "android", "channels": [], "badge": Int.max, "timeZone": "Europe/Paris"],
        ["objectId": "c3", "deviceType": "ios", "badge": -1.5, "installationId": NSNull()],
    ]

    public static func push(_ bytes: [UInt8]) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return }
        let constraints = object["where"] as? [String: Any] ?? ["channels": ["$in": object["channels"] as? [Any] ?? []]]
        let query = InstallationQuery(constraints: constraints)
        let targets = installations.filter(query.matches)
        _ = try? ParseRoutes.expiration(object)
        guard let data = object["data"] as? [String: Any] else { return }
        let payload = PushPayload(data: data)
        for installation in targets {
            _ = payload.json(badge: PushSender.incremented(installation["badge"] as? Int))
        }
        _ = payload.json(badge: nil)
    }
}
