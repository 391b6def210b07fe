/// SplitMix64 (Steele, Lea and Flood): a small, fast generator whose 64-bit outputs do not repeat
/// within a seed's period of 2^64. For identifiers that only need to be unique and for seeded
/// randomness that must repeat exactly; not for secrets.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
