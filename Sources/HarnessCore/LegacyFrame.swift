import Foundation
import Recording

/// A notification of APNs's legacy binary gateway, rebuilt from its recorded entry (the HTTP/2
/// request it stands for: `apns-legacy://host:port/3/device/<token>`, expiry and priority as headers,
/// its identifier as `x-legacy-identifier`, the payload as the body) in the command it came in: 2 when
/// it had a priority, 1 when it had an expiry, else the simple command 0.
struct LegacyFrame: Equatable {
    var token: [UInt8]
    var payload: [UInt8]
    var identifier: UInt32
    var expiry: UInt32?
    var priority: UInt8?

    /// Why an entry cannot be sent as a frame.
    enum Unusable: Error, Equatable, CustomStringConvertible {
        /// Its URL (the first 120 characters) ends in no device token.
        case noToken(url: String)
        /// Its payload is more bytes than a frame's 16-bit length holds.
        case payloadTooLarge(Int)
        /// A header's value (its first 20 characters) is not a number of the frame's field.
        case notANumber(header: String, value: String)

        var description: String {
            switch self {
            case .noToken(let url): "its URL \(url) ends in no device token"
            case .payloadTooLarge(let bytes): "its payload of \(bytes) bytes is more than a frame holds"
            case .notANumber(let header, let value): "its \(header) '\(value)' is not a number a frame holds"
            }
        }
    }

    /// - Parameters:
    ///   - replacing: recorded tokens → this run's (``RecordedTokens``).
    ///   - now: when it is sent again: a recorded expiry moves by as long after the recording
    ///     (``RecordedExpiry``).
    init(entry: HAR.Entry, replacing: [String: String], now: Date = Date()) throws(Unusable) {
        let hex = RecordedTokens.replacing(
            replacing, in: String(entry.request.url.split(separator: "/").last ?? ""))
        guard let token = Self.bytes(hex: hex), (1...100).contains(token.count) else {
            throw .noToken(url: String(entry.request.url.prefix(120)))
        }
        let text = RecordedTokens.replacing(replacing, in: entry.request.postData?.text ?? "")
        guard text.utf8.count <= Int(UInt16.max) else {
            throw .payloadTooLarge(text.utf8.count)
        }
        func number<Value: FixedWidthInteger>(_ name: String, _: Value.Type) throws(Unusable) -> Value? {
            guard var value = entry.requestHeader(name) else { return nil }
            if name == "apns-expiration" {
                value = RecordedExpiry.shifted(value, recordedAt: entry.startedDateTime, now: now)
            }
            guard let number = Value(value) else {
                throw .notANumber(header: name, value: String(value.prefix(20)))
            }
            return number
        }
        self.token = token
        payload = Array(text.utf8)
        identifier = try number("x-legacy-identifier", UInt32.self) ?? 0
        expiry = try number("apns-expiration", UInt32.self)
        priority = try number("apns-priority", UInt8.self)
    }

    init(token: [UInt8], payload: [UInt8], identifier: UInt32 = 0, expiry: UInt32? = nil, priority: UInt8? = nil) {
        self.token = token
        self.payload = payload
        self.identifier = identifier
        self.expiry = expiry
        self.priority = priority
    }

    /// The frame's bytes.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        func append<Value: FixedWidthInteger>(_ value: Value) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        if let priority {
            var items: [UInt8] = []
            func item(_ id: UInt8, _ data: [UInt8]) {
                items.append(id)
                withUnsafeBytes(of: UInt16(data.count).bigEndian) { items.append(contentsOf: $0) }
                items.append(contentsOf: data)
            }
            func big<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
                withUnsafeBytes(of: value.bigEndian) { Array($0) }
            }
            item(1, token)
            item(2, payload)
            item(3, big(identifier))
            if let expiry { item(4, big(expiry)) }
            item(5, [priority])
            bytes.append(2)
            append(UInt32(items.count))
            bytes.append(contentsOf: items)
        } else if let expiry {
            bytes.append(1)
            append(identifier)
            append(expiry)
            append(UInt16(token.count))
            bytes.append(contentsOf: token)
            append(UInt16(payload.count))
            bytes.append(contentsOf: payload)
        } else {
            bytes.append(0)
            append(UInt16(token.count))
            bytes.append(contentsOf: token)
            append(UInt16(payload.count))
            bytes.append(contentsOf: payload)
        }
        return bytes
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2), digits.count <= 400 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.value(digits[index]), let low = Self.value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
