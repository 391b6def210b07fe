/// The newest elements of an endless stream (a long-running server's timeline or notification log),
/// kept within a count and a memory budget: elements fill a generation, and when it is full it becomes
/// the older one and the older one before it is forgotten whole. Forgetting a generation at a time
/// keeps the cost per element constant, and the caller frees what was forgotten outside its lock.
///
/// A generation is full when it holds `retention` elements or when the next element would take it over
/// half the budget. So what is kept never takes more than the budget (unless one element alone is over
/// half of it), and always holds at least the newest `retention` elements or half the budget's worth,
/// whichever comes first. An element's bytes are the caller's estimate of what keeping it costs.
public struct Generations<Element> {
    /// Each generation holds at most this many elements; nil: no count limit.
    public let retention: Int?
    /// What the two generations may take together, in estimated bytes; nil: no memory limit.
    public let budget: Int?
    public private(set) var older: [Element] = []
    public private(set) var newer: [Element] = []
    private var olderBytes = 0
    private var newerBytes = 0
    /// How many of the oldest elements were forgotten; positions count from the first element ever.
    public private(set) var forgotten = 0
    /// How many times the newer generation became the older: what goes with the elements (an index, a
    /// table of pending changes) can turn over with them.
    public private(set) var turnovers = 0

    public init(retention: Int? = nil, budget: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "a retention keeps at least one element")
        precondition(budget.map { $0 > 0 } ?? true, "a memory budget is more than zero bytes")
        self.retention = retention
        self.budget = budget
    }

    /// Appends `element`, which takes `bytes` to keep, and returns the generation forgotten to make room
    /// (empty when none was): free it once any lock around this value is released.
    public mutating func append(_ element: Element, bytes: Int) -> [Element] {
        var dropped: [Element] = []
        let overBudget = budget.map { !newer.isEmpty && newerBytes + bytes > $0 / 2 } ?? false
        if overBudget { dropped = turnOver() }
        newer.append(element)
        newerBytes += bytes
        if let retention, newer.count >= retention { dropped.append(contentsOf: turnOver()) }
        return dropped
    }

    /// The newer generation becomes the older, and the older is forgotten.
    private mutating func turnOver() -> [Element] {
        let dropped = older
        forgotten += dropped.count
        turnovers += 1
        older = newer
        olderBytes = newerBytes
        newer = []
        newer.reserveCapacity(older.count)
        newerBytes = 0
        return dropped
    }

    /// How many elements are kept.
    public var count: Int { older.count + newer.count }
    /// What the kept elements take, as their appends estimated it.
    public var bytes: Int { olderBytes + newerBytes }
    /// Every kept element, oldest first.
    public var all: [Element] { older + newer }

    /// Changes the element appended `position`-th, if it is still kept; returns whether it was.
    @discardableResult
    public mutating func update(position: Int, _ change: (inout Element) -> Void) -> Bool {
        let local = position - forgotten
        guard local >= 0 else { return false }
        if local < older.count {
            change(&older[local])
        } else if local - older.count < newer.count {
            change(&newer[local - older.count])
        } else {
            return false
        }
        return true
    }

    /// The position the next element appended will have.
    public var nextPosition: Int { forgotten + older.count + newer.count }

    /// Forgets everything, positions included.
    public mutating func removeAll() {
        self = Generations(retention: retention, budget: budget)
    }
}

extension Generations: Sendable where Element: Sendable {}
