/// The checks RFC 9113 (sections 8.2 and 8.3) asks of a request's header block, made in one pass over
/// bytes: field names lowercase tokens, values without NUL, CR, LF or surrounding whitespace, the
/// request pseudo-headers (each once, before any other field, `:method`, `:scheme` and a non-empty
/// `:path` present), no connection-specific fields, `te` only as `trailers`, and no pseudo-headers in
/// trailers. FakeAPNs makes them itself, in place of NIOHTTP2's own header-block validation, which
/// costs a request several times as much; a malformed block resets its stream and nothing else.
enum RequestHeaderCheck {
    /// Why the block is malformed, in words; nil when it is well-formed.
    ///
    /// - Parameter checked: a block of the same connection that was well-formed. A field equal to the
    ///   one at its place there had its name and value checked then: only the block's own rules (order,
    ///   repetition, the pseudo-headers present) are checked for it again. A provider sends the same
    ///   fields in the same order on every request, and the strings of equal fields are shared, so most
    ///   fields compare equal at once.
    static func problem(
        _ headers: [(name: String, value: String)], trailers: Bool, checked: [(name: String, value: String)] = []
    ) -> String? {
        var regularSeen = false
        var pseudo: UInt8 = 0  // bits: :method, :scheme, :path, :authority
        for (index, header) in headers.enumerated() {
            let name = header.name
            let known = index < checked.count && checked[index].name == name && checked[index].value == header.value
            guard let first = name.utf8.first else { return "an empty field name" }
            if first == UInt8(ascii: ":") {
                if trailers { return "pseudo-header \(name) in trailers" }
                if regularSeen { return "pseudo-header \(name) after a regular field" }
                let bit: UInt8
                switch name {
                case ":method": bit = 1
                case ":scheme": bit = 2
                case ":path":
                    bit = 4
                    if header.value.isEmpty { return "an empty :path" }
                case ":authority": bit = 8
                default: return "unknown pseudo-header \(name)"
                }
                if pseudo & bit != 0 { return "pseudo-header \(name) more than once" }
                pseudo |= bit
            } else {
                regularSeen = true
                if known { continue }
                guard isKnownName(name) || isLowercaseToken(name) else {
                    return "field name '\(name)' is not a lowercase token"
                }
                switch name {
                case "connection", "proxy-connection", "keep-alive", "transfer-encoding", "upgrade":
                    return "connection-specific field \(name)"
                case "te" where header.value != "trailers":
                    return "te other than trailers"
                default:
                    break
                }
            }
            if !known, let problem = valueProblem(header.value) { return "field \(name): \(problem)" }
        }
        if !trailers, pseudo & 7 != 7 { return "a request without :method, :scheme and :path" }
        return nil
    }

    /// The names a provider's requests carry: lowercase tokens as they stand, no need to look at each
    /// byte.
    static let knownNames = [
        "authorization", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-id",
        "apns-collapse-id", "content-length", "content-type", "user-agent",
    ]

    /// Whether `name` is one of ``knownNames``; by length first, so that most names take one comparison.
    static func isKnownName(_ name: String) -> Bool {
        let length = name.utf8.count
        return knownNames.contains { $0.utf8.count == length && $0 == name }
    }

    private static func valueProblem(_ value: String) -> String? {
        var value = value
        return value.withUTF8 { bytes in
            guard let first = bytes.first, let last = bytes.last else { return nil }
            if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return "whitespace around the value" }
            return containsNULCROrLF(bytes) ? "NUL, CR or LF in the value" : nil
        }
    }

    /// Eight bytes at a time, as values such as a provider token are a few hundred bytes long: a word
    /// holds a byte equal to `c` when `(w ^ c…c) - 0x01…01` borrows into a byte whose top bit was clear.
    static func containsNULCROrLF(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if hasZeroByte(word) || hasZeroByte(word ^ (ones &* 0x0A)) || hasZeroByte(word ^ (ones &* 0x0D)) {
                return true
            }
            offset += 8
        }
        while offset < raw.count {
            let byte = raw[offset]
            if byte == 0 || byte == 0x0A || byte == 0x0D { return true }
            offset += 1
        }
        return false
    }

    static func isLowercaseToken(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            for byte in bytes {
                let bit = UInt64(1) << UInt64(byte & 63)
                let allowed: UInt64
                switch byte >> 6 {
                case 0: allowed = tokenMask0
                case 1: allowed = tokenMask1
                default: return false
                }
                if allowed & bit == 0 { return false }
            }
            return true
        }
    }

    /// RFC 9110's token characters less the uppercase letters HTTP/2 forbids in names, as bits of bytes
    /// 0–63 and 64–127: digits and `!#$%&'*+-.`, then `a`–`z` and `^_`|~`.
    private static let tokenMask0: UInt64 = {
        var mask: UInt64 = 0
        for byte in "0123456789!#$%&'*+-.".utf8 { mask |= 1 << UInt64(byte) }
        return mask
    }()
    private static let tokenMask1: UInt64 = {
        var mask: UInt64 = 0
        for byte in "abcdefghijklmnopqrstuvwxyz^_`|~".utf8 { mask |= 1 << UInt64(byte - 64) }
        return mask
    }()
}
