import Foundation

/// One entry of the feedback service: `| time (4) | token length (2) | token |`, big-endian, 38 bytes
/// for Apple's 32-byte tokens. The time is when APNs learned the app was removed, in seconds since 1970.
enum FeedbackTuple {
    /// The bytes of one tuple; nil for a token that is not hex of an even length (FakeAPNs issues none).
    static func bytes(token: String, removedAt: Date) -> [UInt8]? {
        guard let tokenBytes = Hex.bytes(token), tokenBytes.count <= Int(UInt16.max) else { return nil }
        // A time before 1970 or after 2106 cannot be written; it is clamped, as a `time_t` in 32 bits.
        let seconds = UInt32(max(0, min(Double(UInt32.max), removedAt.timeIntervalSince1970.rounded(.down))))
        let length = UInt16(tokenBytes.count)
        return [
            UInt8(seconds >> 24), UInt8(seconds >> 16 & 0xFF), UInt8(seconds >> 8 & 0xFF), UInt8(seconds & 0xFF),
            UInt8(length >> 8), UInt8(length & 0xFF),
        ] + tokenBytes
    }
}
