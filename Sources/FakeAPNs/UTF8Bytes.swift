import Foundation

extension String {
    /// Whether this string's UTF-8 is `bytes`, byte for byte (not by Unicode's canonical equivalence,
    /// as `==` compares): one `memcmp`. The header block compares a field with HPACK's bytes this way, and
    /// the validator a topic, a path and a payload with what a connection had before.
    func utf8Equals(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard utf8.count == bytes.count else { return false }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, base, bytes.count) == 0 }
            ?? utf8.elementsEqual(bytes)
    }

    /// Whether this string without its last `count` bytes is `other`, byte for byte.
    func utf8Equals(_ other: String, droppingLast count: Int = 0) -> Bool {
        var text = self
        return text.withUTF8 { text in
            text.count >= count
                && other.utf8Equals(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: text.dropLast(count))))
        }
    }
}
