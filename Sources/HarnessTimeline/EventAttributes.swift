/// An event's fields: a short list of names and values, looked up by name.
///
/// Events carry a handful of fields and are published on the hot paths of every service (one per push
/// accepted by FakeAPNs), so they are kept as the pairs they were written with rather than hashed
/// into a dictionary, or as a reference to an ``EventAttributeSource`` that several events read. They
/// compare, encode and decode as a JSON object does: by name, in any order.
public struct EventAttributes: Sendable, Equatable, Codable, ExpressibleByDictionaryLiteral, Sequence,
    CustomStringConvertible
{
    public typealias Element = (key: String, value: String)

    private enum Storage {
        /// As the literal wrote them: its array is kept as it is, not copied into labelled pairs.
        case pairs([(String, String)])
        /// Read from an object when asked for (``EventAttributeSource``).
        case source(any EventAttributeSource, view: Int)
    }

    private var storage: Storage

    /// The fields as pairs: the stored ones, or a source's read out.
    private var pairs: [(String, String)] {
        switch storage {
        case .pairs(let pairs): return pairs
        case .source(let source, let view):
            var pairs: [(String, String)] = []
            source.forEachAttribute(view: view) { pairs.append(($0, $1)) }
            return pairs
        }
    }

    /// Changes the fields in place (a source's are read out first, and kept as pairs from then on).
    private mutating func changePairs<Result>(_ change: (inout [(String, String)]) -> Result) -> Result {
        var changed = pairs
        // The storage lets go of the list while it changes, so the list is changed where it is, not copied.
        storage = .pairs([])
        defer { storage = .pairs(changed) }
        return change(&changed)
    }

    /// The names must differ, as in a dictionary literal (checked in debug builds).
    public init(dictionaryLiteral elements: (String, String)...) {
        storage = .pairs(elements)
        assert(Set(pairs.map(\.0)).count == pairs.count, "an event attribute named twice: \(pairs.map(\.0))")
    }

    public init(_ dictionary: [String: String]) {
        storage = .pairs(dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// The fields `source` gives for `view`, read from it only when they are: an event that is kept
    /// and forgotten unread costs a reference to the source, not a list of its strings.
    public init(source: any EventAttributeSource, view: Int) {
        storage = .source(source, view: view)
    }

    /// Calls `body` with each field, without making a list of them.
    public func forEachField(_ body: (String, String) -> Void) {
        switch storage {
        case .pairs(let pairs): for (key, value) in pairs { body(key, value) }
        case .source(let source, let view): source.forEachAttribute(view: view, body)
        }
    }

    /// The value named `key`; setting nil removes it, setting a present name replaces its value.
    public subscript(key: String) -> String? {
        get {
            var found: String?
            forEachField { name, value in if found == nil, name == key { found = value } }
            return found
        }
        set {
            changePairs { pairs in
                let index = pairs.firstIndex { $0.0 == key }
                switch (index, newValue) {
                case (let index?, let value?): pairs[index].1 = value
                case (let index?, nil): pairs.remove(at: index)
                case (nil, let value?): pairs.append((key, value))
                case (nil, nil): break
                }
            }
        }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public var keys: [String] { pairs.map(\.0) }
    public var dictionary: [String: String] { Dictionary(pairs, uniquingKeysWith: { _, last in last }) }

    public func makeIterator() -> Iterator { Iterator(pairs: pairs.makeIterator()) }

    public struct Iterator: IteratorProtocol {
        var pairs: IndexingIterator<[(String, String)]>

        public mutating func next() -> Element? {
            pairs.next().map { (key: $0.0, value: $0.1) }
        }
    }

    /// Adds `other`'s fields; where both name one, `self`'s value stays.
    public mutating func merge(_ other: EventAttributes) {
        changePairs { pairs in
            other.forEachField { key, value in
                if !pairs.contains(where: { $0.0 == key }) { pairs.append((key, value)) }
            }
        }
    }

    /// A copy with `other`'s fields added; where both name one, `self`'s value stays.
    public func merging(_ other: EventAttributes) -> EventAttributes {
        var merged = self
        merged.merge(other)
        return merged
    }

    public static func == (left: EventAttributes, right: EventAttributes) -> Bool {
        left.count == right.count && left.allSatisfy { right[$0.key] == $0.value }
    }

    /// `{name: value, …}` by name, as expectations write them.
    public var description: String {
        "{" + pairs.sorted { $0.0 < $1.0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + "}"
    }

    public init(from decoder: any Decoder) throws {
        self.init(try [String: String](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try dictionary.encode(to: encoder)
    }
}

/// An object whose fields several events read, each a view of it (FakeAPNs's accepted push is read by
/// its `apns.request.accepted` and its `apns.delivered`): events on a hot path then keep a reference to one
/// object instead of a list of pairs each. A source never changes once made: an event's fields are
/// those it had when it was published.
public protocol EventAttributeSource: AnyObject, Sendable {
    /// Calls `body` with each field of `view`, every name once.
    func forEachAttribute(view: Int, _ body: (String, String) -> Void)
}
