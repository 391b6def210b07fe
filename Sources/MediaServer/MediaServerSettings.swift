import Foundation
import HarnessTimeline

/// How fast the media server answers; changeable while it runs (the control API's `PUT /settings`).
public struct MediaServerSettings: Codable, Sendable, Equatable {
    /// Bytes per second for each connection's bodies; nil for no limit.
    public var throttleBytesPerSecond: Int?
    /// Bytes per second for all connections together; nil for no limit.
    public var serverBytesPerSecond: Int?
    /// How many bytes a bucket holds (sent at once after a pause); nil for one write's worth.
    public var burstBytes: Int?
    /// The server's think time before a response's first byte.
    public var firstByteDelayMilliseconds: Int = 0
    /// A link's one-way delay, added before every response's first byte.
    public var latencyMilliseconds: Int = 0

    public init(throttleBytesPerSecond: Int? = nil) {
        self.throttleBytesPerSecond = throttleBytesPerSecond
    }

    /// What is wrong with the settings, in words; nil when they can be used.
    public var problem: String? {
        for (name, value) in [
            ("throttleBytesPerSecond", throttleBytesPerSecond), ("serverBytesPerSecond", serverBytesPerSecond),
            ("burstBytes", burstBytes),
        ] {
            if let value, let problem = InputBounds.problem(name, value, in: InputBounds.bytesPerSecond) {
                return problem + ", or null for no limit"
            }
        }
        for (name, value) in [
            ("firstByteDelayMilliseconds", firstByteDelayMilliseconds), ("latencyMilliseconds", latencyMilliseconds),
        ] {
            if let problem = InputBounds.problem(name, value, in: InputBounds.milliseconds, unit: " ms") {
                return problem
            }
        }
        return nil
    }

    /// How long a response waits before its first byte: think time plus the link's delay.
    var firstByteWait: Duration { .milliseconds(firstByteDelayMilliseconds + latencyMilliseconds) }

    /// The size of one body write at `rate`: about 50 writes a second, between 1 KB and 64 KB.
    static func chunkSize(rate: Int?) -> Int { rate.map { max(1024, min(65536, $0 / 50)) } ?? 65536 }
}

extension MediaServerSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case throttleBytesPerSecond, serverBytesPerSecond, burstBytes, firstByteDelayMilliseconds, latencyMilliseconds
    }

    /// Every key, `null` for no limit, so that `GET /settings` shows what can be set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(throttleBytesPerSecond, forKey: .throttleBytesPerSecond)
        try container.encode(serverBytesPerSecond, forKey: .serverBytesPerSecond)
        try container.encode(burstBytes, forKey: .burstBytes)
        try container.encode(firstByteDelayMilliseconds, forKey: .firstByteDelayMilliseconds)
        try container.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
    }

    /// Reads settings over `base`: a key that is present replaces its value (`null` clears a limit), a
    /// key that is absent keeps it, an unknown key is an error.
    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, over: MediaServerSettings())
    }

    public init(from decoder: any Decoder, over base: MediaServerSettings) throws {
        self = base
        let known = try decoder.container(keyedBy: CodingKeys.self)
        let any = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = any.allKeys.first(where: { CodingKeys(stringValue: $0.stringValue) == nil }) {
            throw DecodingError.dataCorruptedError(
                forKey: unknown, in: any,
                debugDescription:
                    "unknown setting '\(unknown.stringValue)'; known: \(CodingKeys.allCases.map(\.stringValue).joined(separator: ", "))"
            )
        }
        if known.contains(.throttleBytesPerSecond) {
            throttleBytesPerSecond = try known.decode(Int?.self, forKey: .throttleBytesPerSecond)
        }
        if known.contains(.serverBytesPerSecond) {
            serverBytesPerSecond = try known.decode(Int?.self, forKey: .serverBytesPerSecond)
        }
        if known.contains(.burstBytes) { burstBytes = try known.decode(Int?.self, forKey: .burstBytes) }
        if let value = try known.decodeIfPresent(Int.self, forKey: .firstByteDelayMilliseconds) {
            firstByteDelayMilliseconds = value
        }
        if let value = try known.decodeIfPresent(Int.self, forKey: .latencyMilliseconds) { latencyMilliseconds = value }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension MediaServerSettings {
    /// Settings from JSON over `base` (see ``init(from:over:)``).
    static func decode(_ data: Data, over base: MediaServerSettings) throws -> MediaServerSettings {
        let decoder = JSONDecoder()
        decoder.userInfo[baseKey] = Box(base)
        return try decoder.decode(Over.self, from: data).settings
    }

    private static let baseKey = CodingUserInfoKey(rawValue: "MediaServerSettings.base")!

    private final class Box: @unchecked Sendable {
        let value: MediaServerSettings
        init(_ value: MediaServerSettings) { self.value = value }
    }

    private struct Over: Decodable {
        var settings: MediaServerSettings
        init(from decoder: any Decoder) throws {
            let base = (decoder.userInfo[MediaServerSettings.baseKey] as? Box)?.value ?? MediaServerSettings()
            settings = try MediaServerSettings(from: decoder, over: base)
        }
    }
}
