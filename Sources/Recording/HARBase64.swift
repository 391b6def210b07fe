import Foundation

/// A HAR body's `text` when its `encoding` is `base64`: RFC 4648's alphabet with its padding, where
/// line breaks (CR and LF: a wrapped export's, as MIME wraps at 76) are allowed and skipped. Anything
/// else is refused, not dropped: Foundation's `.ignoreUnknownCharacters` read "this is not base64 at
/// all" as 15 bytes.
enum HARBase64 {
    /// The bytes `text` encodes, or nil when it is not base64.
    static func decode(_ text: String) -> Data? {
        guard problem(in: text) == nil else { return nil }
        return Data(base64Encoded: String(String.UnicodeScalarView(text.unicodeScalars.filter { !isLineBreak($0) })))
    }

    /// Why `text` is not base64, or nil when it is: the first character outside the alphabet (by its
    /// offset), or a length or padding that does not add up.
    static func problem(in text: String) -> String? {
        var count = 0
        var padding = 0
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if isLineBreak(scalar) { continue }
            if scalar == "=" {
                padding += 1
            } else if padding > 0 || !isAlphabet(scalar) {
                let shown =
                    scalar.isASCII && scalar.value >= 0x20 ? "'\(scalar)'" : "U+\(String(scalar.value, radix: 16))"
                return "is not base64: \(shown) at offset \(offset) is not in its alphabet"
            }
            count += 1
        }
        guard count % 4 == 0, padding <= 2 else {
            return "is not base64: \(count) characters (with \(padding) of padding) are not whole groups of four"
        }
        return nil
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\r"
    }

    private static func isAlphabet(_ scalar: Unicode.Scalar) -> Bool {
        ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "+"
            || scalar == "/"
    }
}
