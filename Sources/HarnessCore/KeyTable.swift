/// The keys of one mapping in harness.yml, each listed once with what reading it does to `Target`: a
/// key the table knows is always read, and any other key is an error naming it. Keys are read in the
/// table's order, whatever the file's.
struct KeyTable<Target> {
    typealias Read = (YAMLReader, inout Target) throws -> Void
    let keys: KeyValuePairs<String, Read>

    init(_ keys: KeyValuePairs<String, Read>) { self.keys = keys }

    /// Reads the mapping into `target` and returns the keys it had.
    @discardableResult
    func read(_ reader: YAMLReader, into target: inout Target) throws -> Set<String> {
        let found = try reader.mapping(known: Set(keys.map(\.key)))
        for (key, read) in keys {
            if let value = found[key] { try read(value, &target) }
        }
        return Set(found.keys)
    }

    /// `base` with the mapping read into it.
    func overlay(_ reader: YAMLReader, on base: Target) throws -> Target {
        var target = base
        try read(reader, into: &target)
        return target
    }
}
