import HarnessTimeline

/// Makes random (version 4) UUID strings for `apns-id` and `apns-unique-id`.
///
/// Foundation's `UUID()` opens and reads `/dev/urandom` for every identifier on Linux, which made it a
/// tenth of the cost of answering a push. A generator is seeded once from the system's entropy and
/// then runs SplitMix64, which never repeats a 64-bit output within one seed's 2^64 steps: plenty
/// for identifiers that only have to be unique, not secret. One generator per provider connection
/// keeps it free of locks.
struct MessageIDGenerator {
    private var random: SplitMix64

    init() {
        var system = SystemRandomNumberGenerator()
        random = SplitMix64(seed: system.next())
    }

    /// `8-4-4-4-12` hex digits: uppercase, as Apple generates `apns-id`, or lowercase, as Apple sends
    /// `apns-unique-id`.
    mutating func make(lowercase: Bool = false) -> String {
        let high = (random.next() & ~0xF000) | 0x4000  // version 4
        let low = (random.next() & ~(0xC << 60)) | (0x8 << 60)  // variant 10
        // Digits past 9 start at `a` or `A`: 10 less than either.
        let letters = (lowercase ? UInt8(ascii: "a") : UInt8(ascii: "A")) &- 10
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            func put(_ value: UInt64, nibbles: Int) {
                for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                    let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
                    buffer[index] = nibble < 10 ? UInt8(ascii: "0") &+ nibble : letters &+ nibble
                    index += 1
                }
            }
            func dash() {
                buffer[index] = UInt8(ascii: "-")
                index += 1
            }
            put(high >> 32, nibbles: 8)
            dash()
            put(high >> 16, nibbles: 4)
            dash()
            put(high, nibbles: 4)
            dash()
            put(low >> 48, nibbles: 4)
            dash()
            put(low, nibbles: 12)
            return index
        }
    }

    /// A single identifier from a fresh generator, for callers with no connection to hold one.
    static func make() -> String {
        var generator = MessageIDGenerator()
        return generator.make()
    }
}
