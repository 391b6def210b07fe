import HarnessTimeline

/// The faults one request gets: at most one that ends or replaces the response (a cut, a stall, a
/// status, a lying length, a close), and any number that only change its headers.
struct AppliedFaults: Equatable {
    var ending: MediaFault?
    var headerChanges: Set<MediaFault.Kind> = []

    static let none = AppliedFaults()

    var isEmpty: Bool { ending == nil && headerChanges.isEmpty }

    /// What these faults change about the reply.
    var alterations: ReplyAlterations {
        // Once per request: no arrays. Header changes take no parameters, and none conflicts with another.
        var alterations = ReplyAlterations()
        for kind in headerChanges { kind.effect.alter(&alterations, by: MediaFault(kind)) }
        if let ending { ending.fault.effect.alter(&alterations, by: ending) }
        return alterations
    }

    func contains(_ kind: MediaFault.Kind) -> Bool {
        ending?.fault == kind || headerChanges.contains(kind)
    }
}

/// The faults in force and how often each has fired. Decides, request by request, which faults apply:
/// every rule that matches and is due, except that of the rules that end or replace the response only
/// the first one does (the others stay due for later requests).
struct MediaFaultPlan {
    struct Rule {
        var id: Int
        var fault: MediaFault
        var matched = 0
        var fired = 0
        var random: SplitMix64
        /// The rule's own seed, or one drawn at random when it has none: reported, so that a run can
        /// be told apart and recorded.
        let seed: UInt64

        init(id: Int, fault: MediaFault) {
            self.id = id
            self.fault = fault
            self.seed = fault.seed ?? UInt64.random(in: 0...UInt64(Int64.max))
            self.random = SplitMix64(seed: seed)
        }
    }

    /// Every request tries every rule: a bound on how many a control client can add, and on the bytes
    /// of their path patterns together, so that matching a request (at most pattern × target steps per
    /// rule) stays cheap whatever the rules are.
    static let mostRules = 1000
    static let mostPatternBytes = 4096

    /// Whether `fault` can join the rules in force; a sentence saying why not otherwise.
    func refusal(adding fault: MediaFault) -> String? {
        if rules.count >= Self.mostRules {
            return "at most \(Self.mostRules) fault rules are kept; DELETE /faults clears them"
        }
        let bytes = rules.reduce(fault.path?.utf8.count ?? 0) { $0 + ($1.fault.path?.utf8.count ?? 0) }
        if bytes > Self.mostPatternBytes {
            return
                "the rules' path patterns may hold \(Self.mostPatternBytes) bytes together; DELETE /faults clears them"
        }
        return nil
    }

    private(set) var rules: [Rule] = []
    private var nextId = 1

    mutating func add(_ fault: MediaFault) -> Int {
        defer { nextId += 1 }
        rules.append(Rule(id: nextId, fault: fault))
        return nextId
    }

    mutating func remove(id: Int) -> Bool {
        guard let index = rules.firstIndex(where: { $0.id == id }) else { return false }
        rules.remove(at: index)
        return true
    }

    mutating func removeAll() { rules.removeAll() }

    var status: [MediaFaultStatus] {
        rules.map {
            MediaFaultStatus(
                id: $0.id, rule: $0.fault, matched: $0.matched, fired: $0.fired,
                seed: $0.fault.probability == nil ? nil : $0.seed)
        }
    }

    /// The faults for the next request to `path`, each counted as fired; ``AppliedFaults/none`` when
    /// no rule applies.
    mutating func next(for path: String) -> AppliedFaults {
        var applied = AppliedFaults()
        for index in rules.indices where rules[index].fault.matches(path: path) {
            let fault = rules[index].fault
            if let count = fault.count, rules[index].fired >= count { continue }
            let onlyHeaders = fault.fault.onlyChangesHeaders
            if !onlyHeaders, applied.ending != nil { continue }
            rules[index].matched += 1
            if let probability = fault.probability {
                let draw = Double(rules[index].random.next() >> 11) / Double(1 << 53)
                guard draw < probability else { continue }
            }
            rules[index].fired += 1
            if onlyHeaders { applied.headerChanges.insert(fault.fault) } else { applied.ending = fault }
        }
        return applied
    }
}
