import Foundation

/// A request's header block as nghttp2 hands it over, one field at a time, made into the fields the
/// provider API reads: counted against the header list limit (RFC 9113 section 6.5.2, name and value
/// plus 32 a field), which nghttp2 does not enforce.
///
/// A provider sends the same fields on every request (its token, topic, path), and HPACK hands them
/// over as the same bytes again: a field equal to one of the connection's earlier ones shares its
/// strings rather than making new ones, which saves every request allocations and keeps one copy of
/// the provider token in the notification log, however many requests refer to it.
/// A block equal to the last one, field for field (a provider pushing the same notification to the
/// same device again), is handed over as the last one's list itself: the requests, and the log's
/// records of them, share one list.
struct NGHTTP2HeaderBlock {
    /// The most a block may take, `SETTINGS_MAX_HEADER_LIST_SIZE`.
    let limit: Int
    /// The stream whose block is being read; 0: none.
    private(set) var stream: Int32 = 0
    private var fields: [(name: String, value: String)] = []
    private var size = 0
    /// Earlier fields of the connection, the newest for each name, at most ``rememberedNames`` names.
    private var remembered: [(name: String, value: String)] = []
    /// The last block read: a provider sends its fields in the same order every time, so the field at
    /// the same place there is the first one compared.
    private var previous: [(name: String, value: String)] = []
    /// Every field of the block being read so far is the one at its place in `previous`.
    private var samePlaces = true
    static let rememberedNames = 16

    init(limit: Int) {
        self.limit = limit
    }

    /// A block starts on `stream` (a request's, or its trailers).
    mutating func begin(stream: Int32) {
        self.stream = stream
        fields = []
        // Room for as many fields as the connection's requests have had: one allocation, not several.
        fields.reserveCapacity(max(remembered.count, 8))
        size = 0
        samePlaces = true
    }

    enum Added: Equatable {
        case added
        /// The field is not part of a block being read (its stream's was abandoned).
        case ignored
        /// The block is over ``limit``: the connection ends.
        case overLimit
    }

    /// Adds a field of `stream`'s block. A name with bytes outside ASCII, which HTTP/2 forbids, is kept
    /// with `?` in their place, so that the block's check finds it malformed and resets its stream.
    mutating func add(stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Added {
        guard stream == self.stream, stream != 0 else { return .ignored }
        size += name.count + value.count + 32
        guard size <= limit else {
            end(stream: stream)
            return .overLimit
        }
        fields.append(strings(name: name, value: value))
        return .added
    }

    /// The block of `stream`, complete; nil when no block of that stream is being read.
    mutating func finish(stream: Int32) -> [(name: String, value: String)]? {
        guard stream == self.stream, stream != 0 else { return nil }
        defer { end(stream: stream) }
        if samePlaces, fields.count == previous.count { return previous }
        previous = fields
        return fields
    }

    /// Abandons `stream`'s block, if it is the one being read.
    mutating func end(stream: Int32) {
        guard stream == self.stream else { return }
        self.stream = 0
        fields = []
    }

    /// The field as strings, shared with an earlier field of the same name and value when there is one.
    private mutating func strings(
        name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>
    ) -> (String, String) {
        let place = fields.count
        if place < previous.count, Self.equal(previous[place].name, name), Self.equal(previous[place].value, value) {
            return previous[place]
        }
        samePlaces = false
        if let index = remembered.firstIndex(where: { Self.equal($0.name, name) }) {
            let known = remembered[index]
            if Self.equal(known.value, value) { return known }
            let field = (known.name, String(decoding: value, as: UTF8.self))
            remembered[index] = field
            return field
        }
        let ascii = name.allSatisfy { $0 < 0x80 }
        let nameString =
            ascii
            ? String(decoding: name, as: UTF8.self)
            : String(decoding: name.map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        let field = (nameString, String(decoding: value, as: UTF8.self))
        // A name with `?` never equals the bytes it came from: it is not remembered.
        if ascii {
            if remembered.count == Self.rememberedNames { remembered.removeFirst() }
            remembered.append(field)
        }
        return field
    }

    private static func equal(_ string: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        string.utf8Equals(UnsafeRawBufferPointer(bytes))
    }
}
