import Foundation

/// One entry of the feedback service: `| time (4) | token length (2) | token |`, big-endian, 38 bytes
/// for Apple's 32-byte tokens. The time is when APNs learned the app was removed, in seconds since 1970.
enum FeedbackTuple {
    /// The bytes of one tuple; nil for a token that is not hex of an even length (FakeAPNs issues none).
    static func bytes(token: String, removedAt: Date) -> [UInt8]? {
        let utf8 = Array(token.utf8)
        guard utf8.count.isMultiple(of: 2), utf8.count / 2 <= Int(UInt16.max) else { return nil }
        var tokenBytes: [UInt8] = []
        tokenBytes.reserveCapacity(utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            tokenBytes.append(high << 4 | low)
        }
        // A time before 1970 or after 2106 cannot be written; it is clamped, as a `time_t` in 32 bits.
        let seconds = UInt32(max(0, min(Double(UInt32.max), removedAt.timeIntervalSince1970.rounded(.down))))
        let length = UInt16(tokenBytes.count)
        return [
            UInt8(seconds >> 24), UInt8(seconds >> 16 & 0xFF), UInt8(seconds >> 8 & 0xFF), UInt8(seconds & 0xFF),
            UInt8(length >> 8), UInt8(length & 0xFF),
        ] + tokenBytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
