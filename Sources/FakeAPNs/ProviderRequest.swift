import Foundation

/// One request as it arrived on an HTTP/2 stream, before validation.
public struct ProviderRequest: Sendable {
    /// Header fields in arrival order, pseudo-headers included, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: Data

    public init(headers: [(name: String, value: String)], body: Data) {
        self.headers = headers
        self.body = body
    }

    public func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }
    public func first(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// The fields the provider API reads, each its first value, found in one pass over the headers.
    struct Fields {
        var method: String?
        var path: String?
        var authority: String?
        var host: String?
        var authorization: String?
        var topic: String?
        var pushType: String?
        var priority: String?
        var expiration: String?
        var id: String?
        var collapseId: String?
        /// A regular (not pseudo) header came more than once.
        var duplicated = false
    }

    var fields: Fields {
        var fields = Fields()
        var repeated = false
        for (index, (name, value)) in headers.enumerated() {
            // By length first: most names then need one comparison, not a dozen.
            switch (name.utf8.count, name) {
            case (7, ":method"): _ = Self.keepFirst(&fields.method, value)
            case (5, ":path"): _ = Self.keepFirst(&fields.path, value)
            case (10, ":authority"): _ = Self.keepFirst(&fields.authority, value)
            case (7, ":scheme"): break
            case (4, "host"): repeated = Self.keepFirst(&fields.host, value) || repeated
            case (13, "authorization"): repeated = Self.keepFirst(&fields.authorization, value) || repeated
            case (10, "apns-topic"): repeated = Self.keepFirst(&fields.topic, value) || repeated
            case (14, "apns-push-type"): repeated = Self.keepFirst(&fields.pushType, value) || repeated
            case (13, "apns-priority"): repeated = Self.keepFirst(&fields.priority, value) || repeated
            case (15, "apns-expiration"): repeated = Self.keepFirst(&fields.expiration, value) || repeated
            case (7, "apns-id"): repeated = Self.keepFirst(&fields.id, value) || repeated
            case (16, "apns-collapse-id"): repeated = Self.keepFirst(&fields.collapseId, value) || repeated
            default:
                // Other headers (user-agent, content-length) are few: look back for an earlier one.
                guard !name.hasPrefix(":") else { continue }
                if headers[..<index].contains(where: { $0.name == name }) { repeated = true }
            }
        }
        fields.duplicated = repeated
        return fields
    }

    /// Keeps the first value of a field; true when there already was one.
    private static func keepFirst(_ slot: inout String?, _ value: String) -> Bool {
        guard slot == nil else { return true }
        slot = value
        return false
    }
}

/// A request APNs accepted: what it will deliver.
public struct AcceptedNotification: Sendable, Codable, Equatable {
    public var apnsId: String
    public var deviceToken: String
    public var topic: String
    public var pushType: String
    public var priority: Int
    /// Seconds since 1970; nil when the header was absent (store up to the default period), 0 = deliver
    /// once, never store.
    public var expiration: Int?
    public var collapseId: String?
    /// The JSON payload exactly as sent.
    public var payload: String
    /// The name its device registered with (a scenario's named device); nil for a device without one.
    public var device: String? = nil
}
