/// An event's fields: a short list of names and values, looked up by name.
///
/// Events carry a handful of fields and are published on the hot paths of every service (one per push
/// accepted by FakeAPNs), so they are kept as the pairs they were written with rather than hashed
/// into a dictionary. They compare, encode and decode as a JSON object does: by name, in any order.
public struct EventAttributes: Sendable, Equatable, Codable, ExpressibleByDictionaryLiteral, Sequence,
    CustomStringConvertible
{
    public typealias Element = (key: String, value: String)

    /// As the literal wrote them: its array is kept as it is, not copied into labelled pairs.
    private var pairs: [(String, String)]

    /// The names must differ, as in a dictionary literal (checked in debug builds).
    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements
        assert(Set(pairs.map(\.0)).count == pairs.count, "an event attribute named twice: \(pairs.map(\.0))")
    }

    public init(_ dictionary: [String: String]) {
        pairs = dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The value named `key`; setting nil removes it, setting a present name replaces its value.
    public subscript(key: String) -> String? {
        get { pairs.first { $0.0 == key }?.1 }
        set {
            let index = pairs.firstIndex { $0.0 == key }
            switch (index, newValue) {
            case (let index?, let value?): pairs[index].1 = value
            case (let index?, nil): pairs.remove(at: index)
            case (nil, let value?): pairs.append((key, value))
            case (nil, nil): break
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
        for (key, value) in other where self[key] == nil { pairs.append((key, value)) }
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
