import Foundation

/// Validates a provider request in the order Apple's servers are observed to: method, path, provider
/// token, device token and topic, headers, payload. Pure, so every rule is testable without a socket.
public struct ProviderRequestValidator: Sendable {
    public var verifier: ProviderTokenVerifier
    /// Known device tokens and the topic each was registered for.
    public var topicOfToken: @Sendable (String) -> String?
    /// Makes an `apns-id` when the provider sent none: an uppercase UUID, as Apple generates.
    public var makeId: @Sendable () -> String = { UUID().uuidString }

    public static let maximumPayloadSize = 4096
    public static let maximumVoIPPayloadSize = 5120
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]

    public init(verifier: ProviderTokenVerifier, topicOfToken: @escaping @Sendable (String) -> String?) {
        self.verifier = verifier
        self.topicOfToken = topicOfToken
    }

    public func validate(_ request: ProviderRequest, now: Date = Date()) -> Result<AcceptedNotification, APNsReason> {
        Result { try accept(request, now: now) }.mapError { $0 as! APNsReason }
    }

    private func accept(_ request: ProviderRequest, now: Date) throws -> AcceptedNotification {
        guard request.first(":method") == "POST" else { throw APNsReason.methodNotAllowed }
        let path = request.first(":path") ?? ""
        guard path.hasPrefix("/3/device/") else { throw APNsReason.badPath }
        let deviceToken = String(path.dropFirst("/3/device/".count))
        guard !deviceToken.isEmpty else { throw APNsReason.missingDeviceToken }

        guard let authorization = request.first("authorization") else { throw APNsReason.missingProviderToken }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw APNsReason.missingProviderToken
        }
        if case .failure(let reason) = verifier.verify(String(parts[1]), now: now) { throw reason }

        for name in Set(request.headers.map(\.name)) where !name.hasPrefix(":") && request.values(name).count > 1 {
            throw APNsReason(status: 400, reason: "DuplicateHeaders")
        }
        guard deviceToken.count.isMultiple(of: 2), deviceToken.allSatisfy(\.isHexDigit),
            let registeredTopic = topicOfToken(deviceToken.lowercased())
        else { throw APNsReason.badDeviceToken }
        guard let topic = request.first("apns-topic"), !topic.isEmpty else { throw APNsReason.missingTopic }
        let pushType = request.first("apns-push-type") ?? "alert"
        guard Self.pushTypes.contains(pushType) else { throw APNsReason.invalidPushType }
        guard topic == registeredTopic + Self.topicSuffix(pushType) else {
            throw APNsReason.deviceTokenNotForTopic
        }

        let priority: Int
        switch request.first("apns-priority") {
        case nil: priority = 10
        case let value?:
            guard let number = Int(value), [1, 5, 10].contains(number) else { throw APNsReason.badPriority }
            priority = number
        }
        // "Always use priority 5 [for background]. Using priority 10 is an error." Apple names no reason.
        if pushType == "background", priority == 10 { throw APNsReason.badPriority }

        var expiration: Int?
        if let value = request.first("apns-expiration") {
            guard let seconds = Int(value) else { throw APNsReason.badExpirationDate }
            expiration = seconds
        }
        let apnsId: String
        if let given = request.first("apns-id") {
            guard UUID(uuidString: given) != nil else { throw APNsReason.badMessageId }
            apnsId = given
        } else {
            apnsId = makeId()
        }
        let collapseId = request.first("apns-collapse-id")
        if let collapseId, collapseId.utf8.count > 64 { throw APNsReason(status: 400, reason: "BadCollapseId") }

        guard !request.body.isEmpty else { throw APNsReason.payloadEmpty }
        let limit = pushType == "voip" ? Self.maximumVoIPPayloadSize : Self.maximumPayloadSize
        guard request.body.count <= limit else { throw APNsReason.payloadTooLarge }
        guard (try? JSONSerialization.jsonObject(with: request.body)) is [String: Any] else {
            throw APNsReason.payloadEmpty
        }
        return AcceptedNotification(
            apnsId: apnsId, deviceToken: deviceToken.lowercased(), topic: registeredTopic, pushType: pushType,
            priority: priority, expiration: expiration, collapseId: collapseId,
            payload: String(decoding: request.body, as: UTF8.self))
    }

    /// The suffix Apple requires on `apns-topic` for each push type.
    static func topicSuffix(_ pushType: String) -> String {
        switch pushType {
        case "voip": ".voip"
        case "complication": ".complication"
        case "fileprovider": ".pushkit.fileprovider"
        case "location": ".location-query"
        case "liveactivity": ".push-type.liveactivity"
        case "pushtotalk": ".voip-ptt"
        case "widgets": ".push-type.widgets"
        case "controls": ".push-type.controls"
        default: ""
        }
    }
}
