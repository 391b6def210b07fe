import Foundation

/// What the validator needs to know about a device token.
public struct DeviceRecord: Sendable, Equatable {
    public var topic: String
    public var environment: String
    /// Set when the app was removed: pushes get `410 Unregistered` with this time.
    public var unregisteredAt: Date?
    /// The name the device registered with (a scenario's named device), for the events about it.
    public var device: String?

    public init(topic: String, environment: String, unregisteredAt: Date? = nil, device: String? = nil) {
        self.topic = topic
        self.environment = environment
        self.unregisteredAt = unregisteredAt
        self.device = device
    }
}

/// Validates a provider request in the order Apple's servers are observed to: method, path, provider
/// token, device token and topic, headers, payload. Pure, so every rule is testable without a socket:
/// the connection's token rules and the device directory come in as closures.
public struct ProviderRequestValidator: Sendable {
    /// Looks a device token (lowercase hex) up.
    public var device: @Sendable (String) -> DeviceRecord?
    /// Makes an `apns-id` when the provider sent none: an uppercase UUID, as Apple generates.
    public var makeId: @Sendable () -> String = { MessageIDGenerator.make() }

    public static let maximumPayloadSize = 4096
    public static let maximumVoIPPayloadSize = 5120
    /// The push types whose `apns-topic` Apple requires a suffix on, and the suffix; `alert`,
    /// `background` and `mdm` take none.
    static let requiredSuffixes: [(pushType: String, suffix: String)] = [
        ("voip", ".voip"), ("complication", ".complication"), ("fileprovider", ".pushkit.fileprovider"),
        ("location", ".location-query"), ("liveactivity", ".push-type.liveactivity"), ("pushtotalk", ".voip-ptt"),
        ("widgets", ".push-type.widgets"), ("controls", ".push-type.controls"),
    ]

    /// The suffix Apple requires on `apns-topic` for `pushType` ("" for none); nil: not a push type.
    static func topicSuffix(for pushType: String) -> String? {
        switch pushType {
        case "alert", "background", "mdm": return ""
        default: return requiredSuffixes.first { $0.pushType == pushType }?.suffix
        }
    }

    /// Every required suffix; none is a suffix of another, so a topic ends with one at most.
    static let topicSuffixes = requiredSuffixes.map(\.suffix)
    /// The suffixes' last bytes: most topics are ruled out by theirs.
    private static let suffixLastBytes = Set(topicSuffixes.compactMap(\.utf8.last))

    /// The suffix of ``topicSuffixes`` that `topic` ends with, or "".
    static func suffix(of topic: String) -> String {
        guard let last = topic.utf8.last, suffixLastBytes.contains(last) else { return "" }
        return topicSuffixes.first { topic.utf8.reversed().starts(with: $0.utf8.reversed()) } ?? ""
    }

    public init(device: @escaping @Sendable (String) -> DeviceRecord?) {
        self.device = device
    }

    /// - Parameters:
    ///   - environment: the environment of the endpoint the request arrived at.
    ///   - certificate: the push certificate the connection authenticated with; nil for token auth.
    ///   - newId: makes the `apns-id` of a request that has none; ``makeId`` when nil.
    ///   - authenticate: checks the bearer token (the connection's rules); nil when it is accepted.
    public func validate(
        _ request: ProviderRequest, environment: String, certificate: ProviderCertificate? = nil,
        newId: (() -> String)? = nil, authenticate: (Substring) -> APNsReason?
    ) -> Result<AcceptedNotification, APNsReason> {
        var recent = Recent()
        return validate(
            request, fields: request.fields, environment: environment, certificate: certificate, newId: newId,
            recent: &recent, authenticate: authenticate)
    }

    /// What a connection's last accepted request gave: its provider sends the same path and payload
    /// again and again (HPACK hands the path over as the same string), and the next request that does
    /// takes the same device token and payload strings instead of making new ones.
    struct Recent {
        var path = ""
        var deviceToken = ""
        var payload = ""
    }

    /// As above, with the request's fields already read, and the connection's ``Recent`` strings.
    func validate(
        _ request: ProviderRequest, fields: ProviderRequest.Fields, environment: String,
        certificate: ProviderCertificate? = nil, newId: (() -> String)? = nil, recent: inout Recent,
        authenticate: (Substring) -> APNsReason?
    ) -> Result<AcceptedNotification, APNsReason> {
        do {
            return .success(
                try accept(
                    request, fields: fields, environment: environment, certificate: certificate, newId: newId ?? makeId,
                    recent: &recent, authenticate: authenticate))
        } catch let reason as APNsReason {
            return .failure(reason)
        } catch {
            return .failure(.internalServerError)
        }
    }

    private func accept(
        _ request: ProviderRequest, fields: ProviderRequest.Fields, environment: String,
        certificate: ProviderCertificate?,
        newId: () -> String, recent: inout Recent, authenticate: (Substring) -> APNsReason?
    ) throws -> AcceptedNotification {
        guard fields.method == "POST" else { throw APNsReason.methodNotAllowed }
        let path = fields.path ?? ""
        guard path.hasPrefix("/3/device/") else { throw APNsReason.badPath }
        // The last accepted request's token when the path is the same; else cut at a byte: the prefix
        // is ASCII, and no grapheme rule is needed.
        let samePath = path.utf8Equals(recent.path)
        let rawToken = samePath ? recent.deviceToken : String(Substring(path.utf8.dropFirst("/3/device/".utf8.count)))
        guard !rawToken.isEmpty else { throw APNsReason.missingDeviceToken }

        if let certificate {
            // With a certificate, the authorization header is ignored.
            guard certificate.environments.contains(environment) else { throw APNsReason.badCertificateEnvironment }
        } else {
            guard let authorization = fields.authorization, let token = Self.bearerTokenSlice(authorization) else {
                throw APNsReason.missingProviderToken
            }
            if let refusal = authenticate(token) { throw refusal }
        }

        // Device token and topic. Tokens are hex of any even length (Apple has said they may grow).
        let deviceToken: String
        switch samePath ? .lowercase : Self.hexDigits(rawToken) {
        case .lowercase: deviceToken = rawToken
        case .mixedCase: deviceToken = rawToken.lowercased()
        case .notHex: throw APNsReason.badDeviceToken
        }
        guard deviceToken.utf8.count.isMultiple(of: 2), let record = device(deviceToken),
            record.environment == environment
        else { throw APNsReason.badDeviceToken }
        // A certificate's own bundle id is the default topic.
        guard let topic = fields.topic.flatMap({ $0.isEmpty ? nil : $0 }) ?? certificate?.bundleId else {
            throw APNsReason.missingTopic
        }
        if let certificate, !certificate.topics.contains(topic) { throw APNsReason.topicDisallowed }
        let suffix = Self.suffix(of: topic)
        // Byte for byte, as Apple's servers compare: not by canonical equivalence.
        guard topic.utf8Equals(record.topic, droppingLast: suffix.utf8.count) else {
            throw APNsReason.deviceTokenNotForTopic
        }

        // Headers.
        if fields.duplicated { throw APNsReason.duplicateHeaders }
        let pushType = fields.pushType ?? "alert"
        guard let required = Self.topicSuffix(for: pushType) else { throw APNsReason.invalidPushType }
        guard suffix == required else { throw APNsReason.badTopic }
        let priority: Int
        switch fields.priority {
        case nil: priority = 10
        case let value?:
            guard let number = Int(value), [1, 5, 10].contains(number) else { throw APNsReason.badPriority }
            priority = number
        }
        // "Always use priority 5 [for background]. Using priority 10 is an error." Apple names no reason.
        if pushType == "background", priority == 10 { throw APNsReason.badPriority }
        var expiration: Int?
        if let value = fields.expiration {
            guard let seconds = Int(value), seconds >= 0 else { throw APNsReason.badExpirationDate }
            expiration = seconds
        }
        let apnsId: String
        if let given = fields.id {
            guard UUID(uuidString: given) != nil else { throw APNsReason.badMessageId }
            apnsId = given
        } else {
            apnsId = newId()
        }
        let collapseId = fields.collapseId
        if let collapseId, collapseId.utf8.count > 64 { throw APNsReason.badCollapseId }

        // Payload.
        guard !request.body.isEmpty else { throw APNsReason.payloadEmpty }
        let limit = pushType == "voip" ? Self.maximumVoIPPayloadSize : Self.maximumPayloadSize
        guard request.body.count <= limit else { throw APNsReason.payloadTooLarge }
        // Apple documents no reason for JSON that does not parse; like APNSwift's and SilentCircle's
        // fakes, treat it as an empty payload.
        guard request.body.withUnsafeBytes(JSONObjectSyntax.isObject) else {
            throw APNsReason.payloadEmpty
        }

        if let unregisteredAt = record.unregisteredAt {
            throw APNsReason.unregistered(at: Int64(unregisteredAt.timeIntervalSince1970 * 1000))
        }
        let payload =
            request.body.withUnsafeBytes { recent.payload.utf8Equals($0) }
            ? recent.payload : String(decoding: request.body, as: UTF8.self)
        // Remembered only from an accepted request: its token was lowercase hex (a mixed-case one is
        // lowercased, so its path is not remembered).
        if deviceToken == rawToken { recent = Recent(path: path, deviceToken: deviceToken, payload: payload) }
        return AcceptedNotification(
            // The request's own string when it is the app's topic: the record's is shared by every
            // connection, and each copy of it would move its reference count between the cores.
            apnsId: apnsId, deviceToken: deviceToken, topic: suffix.isEmpty ? topic : record.topic, pushType: pushType,
            priority: priority,
            expiration: expiration, collapseId: collapseId, payload: payload, device: record.device)
    }

    /// The token of an `authorization: bearer <token>` header (the scheme in any case); nil otherwise.
    public static func bearerToken(_ authorization: String) -> String? {
        bearerTokenSlice(authorization).map(String.init)
    }

    /// The same, without copying the token out of the header.
    static func bearerTokenSlice(_ authorization: String) -> Substring? {
        let bytes = authorization.utf8
        guard let space = bytes.firstIndex(of: UInt8(ascii: " ")),
            bytes.distance(from: bytes.startIndex, to: space) == 6
        else { return nil }
        // The scheme in any case: each byte of "bearer" with its case bit set.
        var scheme = bytes.startIndex
        for letter in "bearer".utf8 {
            guard bytes[scheme] | 0x20 == letter else { return nil }
            scheme = bytes.index(after: scheme)
        }
        // Cut at a byte, not a character: the space is ASCII, so the cut is on a boundary, and nothing
        // needs the grapheme rules that cutting at a character would apply.
        let token = Substring(bytes[bytes.index(after: space)...])
        return token.isEmpty ? nil : token
    }

    enum HexDigits { case lowercase, mixedCase, notHex }

    /// Whether a device token is hex, and in which case, in one pass over its bytes.
    static func hexDigits(_ text: String) -> HexDigits {
        var text = text
        return text.withUTF8 { bytes in
            var upper = false
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
                case UInt8(ascii: "A")...UInt8(ascii: "F"): upper = true
                default: return .notHex
                }
            }
            return upper ? .mixedCase : .lowercase
        }
    }
}
