/// Commands of the legacy binary interface, built byte by byte for the tests that send them.
enum LegacyBytes {
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Command 0.
    static func simple(token: [UInt8], payload: [UInt8]) -> [UInt8] {
        [0] + be16(token.count) + token + be16(payload.count) + payload
    }

    /// Command 1.
    static func enhanced(id: UInt32, expiry: UInt32, token: [UInt8], payload: [UInt8]) -> [UInt8] {
        [1] + be32(id) + be32(expiry) + be16(token.count) + token + be16(payload.count) + payload
    }

    /// One item of command 2.
    static func item(_ id: UInt8, _ data: [UInt8]) -> [UInt8] { [id] + be16(data.count) + data }

    /// Command 2 with these items.
    static func frame(_ items: [[UInt8]]) -> [UInt8] {
        let data = items.flatMap { $0 }
        return [2] + be32(UInt32(data.count)) + data
    }

    /// Command 2 with all five items.
    static func frame(token: [UInt8], payload: [UInt8], id: UInt32, expiry: UInt32 = 0, priority: UInt8 = 10)
        -> [UInt8]
    {
        frame([item(1, token), item(2, payload), item(3, be32(id)), item(4, be32(expiry)), item(5, [priority])])
    }
}
