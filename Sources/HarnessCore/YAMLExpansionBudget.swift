import Yams

/// How far harness.yml may grow once its aliases are expanded, checked before anything reads it.
///
/// Yams's composer hands an alias the very node its anchor names, shared, not copied: a 1 KB file of
/// nine anchors, each a mapping of nine aliases of the one before ("billion laughs"), composes at once
/// into a tree of a billion nodes, which every later walk (turning a push's `data:` into JSON, hashing a
/// key) visits in full. The budget counts the nodes such a walk would visit, each alias as often as it is
/// reached, and the lists and mappings nested on the way down, and stops as soon as either passes its
/// limit: checking costs at most `nodes + 1` steps and `depth + 1` levels of recursion, whatever the
/// document. A real harness.yml has a few thousand nodes and nests a dozen deep.
struct YAMLExpansionBudget: Sendable, Equatable {
    /// harness.yml's budget (docs/limits.md). The depth matches libyaml's own nesting limit (1,000), which
    /// refuses a file nested deeper without aliases.
    static let harnessYML = YAMLExpansionBudget(nodes: 1_000_000, depth: 1_000)

    /// Nodes (scalars, lists, mappings; a mapping's keys too) in the expanded document.
    var nodes: Int
    /// Lists and mappings inside one another in the expanded document (the root's is 1).
    var depth: Int

    enum Limit: Sendable, Equatable {
        case nodes
        case depth
    }

    /// Where the walk passed a limit.
    struct Overrun: Sendable, Equatable {
        var limit: Limit
        /// Whether the walk was inside an alias's expansion: aliases, not the file's own size, passed it.
        var throughAlias: Bool
        /// The innermost node the file itself spells out (a mapping value's key, or the list holding an
        /// alias): a composed alias carries only its anchor's location, not its own.
        var line: Int?
        var column: Int?
        /// The key path down to that alias (or to the node that passed the limit), as `YAMLReader` writes it.
        var keyPath: String
    }

    enum Verdict: Sendable, Equatable {
        /// The expanded document's nodes, all counted.
        case within(nodes: Int)
        case over(Overrun)
    }

    /// What the walk finds, the composed document's anchors still alive: Yams holds a node's anchor
    /// weakly, so keep the `Parser` that composed `root` alive meanwhile, or aliases count the same but
    /// cannot be told from the file's own nodes (an overrun is then placed where its alias's anchor is).
    func verdict(on root: Node) -> Verdict {
        var walk = Walk(budget: self)
        _ = walk.visit(root, enclosing: 0, at: root.mark, throughAlias: false)
        if let overrun = walk.overrun { return .over(overrun) }
        return .within(nodes: walk.count)
    }

    /// The error a user sees for `overrun`.
    func error(_ overrun: Overrun, file: String) -> ConfigurationError {
        ConfigurationError(
            file: file, line: overrun.line, column: overrun.column, keyPath: overrun.keyPath,
            message: message(overrun))
    }

    func message(_ overrun: Overrun) -> String {
        switch (overrun.limit, overrun.throughAlias) {
        case (.nodes, true):
            "aliases expand this document past \(Self.grouped(nodes)) nodes (the limit, docs/limits.md): an alias "
                + "repeats everything under its anchor, its aliases too, so aliases of aliases multiply"
        case (.nodes, false):
            "this document has more than \(Self.grouped(nodes)) nodes (the limit, docs/limits.md)"
        case (.depth, true):
            "aliases nest this document's lists and mappings more than \(Self.grouped(depth)) deep (the limit, "
                + "docs/limits.md): an alias nests everything under its anchor where the alias is"
        case (.depth, false):
            "this document nests lists and mappings more than \(Self.grouped(depth)) deep (the limit, docs/limits.md)"
        }
    }

    /// `1000000` as `1,000,000`, whatever the locale.
    static func grouped(_ number: Int) -> String {
        var result = ""
        for (index, digit) in String(number).reversed().enumerated() {
            if index > 0, index % 3 == 0, digit != "-" { result.append(",") }
            result.append(digit)
        }
        return String(result.reversed())
    }
}

extension YAMLExpansionBudget {
    /// One depth-first walk in document order, stopping at the first overrun.
    private struct Walk {
        enum PathStep {
            case key(String)
            case index(Int)
        }

        let budget: YAMLExpansionBudget
        var count = 0
        var overrun: YAMLExpansionBudget.Overrun?
        /// Anchors met so far: meeting one again is meeting an alias of it.
        private var anchors: Set<ObjectIdentifier> = []
        /// The key path to the node being visited, up to the alias when inside one's expansion.
        private var path: [PathStep] = []

        init(budget: YAMLExpansionBudget) { self.budget = budget }

        /// Visits `node` and all under it; false once a limit is passed. `enclosing`: the lists and
        /// mappings around `node`; `location`: where the innermost written node around it is.
        mutating func visit(_ node: Node, enclosing: Int, at location: Mark?, throughAlias: Bool) -> Bool {
            var throughAlias = throughAlias
            var location = location
            if !throughAlias {
                if let anchor = node.anchor, !anchors.insert(ObjectIdentifier(anchor)).inserted {
                    throughAlias = true
                } else if let mark = node.mark {
                    location = mark
                }
            }
            count += 1
            guard count <= budget.nodes else { return stop(.nodes, at: location, throughAlias: throughAlias) }
            switch node {
            case .scalar, .alias:
                return true
            case .sequence(let sequence):
                let level = enclosing + 1
                guard level <= budget.depth else { return stop(.depth, at: location, throughAlias: throughAlias) }
                for (index, item) in sequence.enumerated() {
                    if !throughAlias { path.append(.index(index)) }
                    guard visit(item, enclosing: level, at: location, throughAlias: throughAlias) else { return false }
                    if !throughAlias { path.removeLast() }
                }
                return true
            case .mapping(let mapping):
                let level = enclosing + 1
                guard level <= budget.depth else { return stop(.depth, at: location, throughAlias: throughAlias) }
                // By index: iterating a Node.Mapping copies its pairs into a new array each time.
                for index in mapping.indices {
                    let (key, value) = mapping[index]
                    if !throughAlias { path.append(.key(key.string ?? "?")) }
                    guard visit(key, enclosing: level, at: location, throughAlias: throughAlias) else { return false }
                    // A value is reported on its key's line, where an alias in its place is written.
                    let valueLocation = throughAlias ? location : key.mark ?? location
                    guard visit(value, enclosing: level, at: valueLocation, throughAlias: throughAlias) else {
                        return false
                    }
                    if !throughAlias { path.removeLast() }
                }
                return true
            }
        }

        private mutating func stop(_ limit: YAMLExpansionBudget.Limit, at location: Mark?, throughAlias: Bool) -> Bool {
            var keyPath = ""
            for step in path {
                switch step {
                case .key(let key): keyPath += keyPath.isEmpty ? key : ".\(key)"
                case .index(let index): keyPath += "[\(index)]"
                }
            }
            overrun = YAMLExpansionBudget.Overrun(
                limit: limit, throughAlias: throughAlias, line: location?.line, column: location?.column,
                keyPath: keyPath)
            return false
        }
    }
}
