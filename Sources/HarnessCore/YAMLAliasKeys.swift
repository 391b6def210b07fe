import CYaml

/// Finds an alias written as a mapping key, or anywhere inside a key, from libyaml's events, before Yams
/// composes the document. Yams checks each mapping's keys for duplicates by hashing them, and hashing an
/// alias walks everything under its anchor, aliases too: a 1 KB file of nested aliases with one used as
/// a key would keep the composer hashing for minutes, before ``YAMLExpansionBudget`` could count it.
/// harness.yml's keys are plain names, so an alias there is refused.
enum YAMLAliasKeys {
    struct Place: Equatable {
        var line: Int
        var column: Int
    }

    /// The first alias in a key's place, or nil (also when libyaml refuses the text: Yams's parser then
    /// says why).
    static func first(in text: String) -> Place? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        return text.utf8CString.withUnsafeBufferPointer { buffer -> Place? in
            buffer.withMemoryRebound(to: UInt8.self) { bytes -> Place? in
                guard let start = bytes.baseAddress else { return nil }
                yaml_parser_set_input_string(&parser, start, bytes.count - 1)
                var scan = Scan()
                var event = yaml_event_t()
                while yaml_parser_parse(&parser, &event) == 1 {
                    defer { yaml_event_delete(&event) }
                    let place = Place(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                    switch event.type {
                    case YAML_STREAM_END_EVENT: return nil
                    case YAML_ALIAS_EVENT: if scan.node(opens: false) { return place }
                    case YAML_SCALAR_EVENT: _ = scan.node(opens: false)
                    case YAML_SEQUENCE_START_EVENT: _ = scan.node(opens: true, mapping: false)
                    case YAML_MAPPING_START_EVENT: _ = scan.node(opens: true, mapping: true)
                    case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT: scan.close()
                    default: break
                    }
                }
                return nil
            }
        }
    }

    /// Where the events are: the open collections, each knowing whether it is (inside) a key and, for
    /// a mapping, whether its next node is a key.
    struct Scan {
        struct Frame {
            var mapping: Bool
            var nextIsKey: Bool
            var withinKey: Bool
        }
        private(set) var frames: [Frame] = []

        /// A node begins (a collection when `opens`): returns whether it is a key or inside one.
        mutating func node(opens: Bool, mapping: Bool = false) -> Bool {
            var keyed = false
            if let last = frames.indices.last {
                keyed = frames[last].withinKey || (frames[last].mapping && frames[last].nextIsKey)
                if frames[last].mapping { frames[last].nextIsKey.toggle() }
            }
            if opens { frames.append(Frame(mapping: mapping, nextIsKey: true, withinKey: keyed)) }
            return keyed
        }

        mutating func close() { _ = frames.popLast() }
    }
}
