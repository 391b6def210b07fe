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
}
