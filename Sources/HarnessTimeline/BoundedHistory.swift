/// The newest elements of an endless stream (a long-running server's timeline or notification log),
/// kept within a count and a memory budget: each append first forgets the oldest elements until the
/// new one fits. So what is kept never takes more than the budget (unless one element alone is over
/// it), and it is always the newest `retention` elements or the budget's worth, whichever is fewer.
/// An element's bytes are the caller's estimate of what keeping it costs.
///
/// Elements are forgotten one at a time, as new ones come, rather than a batch at a time: the memory
/// each one gives back is of the sizes the next one is about to ask for, and glibc's per-thread caches
/// hand it straight back. Freeing thousands of records at once went past those caches into the
/// allocator's slow paths, and cost FakeAPNs about 7 % of its throughput (docs/benchmarks.md).
///
/// Its appends are inlinable, so that the notification log's, in another module, is specialized for its
/// records rather than run through generic value witnesses.
public struct BoundedHistory<Element> {
    /// At most this many elements are kept; nil: no count limit.
    public let retention: Int?
    /// What the kept elements may take together, in estimated bytes; nil: no memory limit.
    public let budget: Int?
    /// A ring: the oldest kept element at `head`, the others after it, wrapping around.
    @usableFromInline var slots: [(element: Element, bytes: Int)?] = []
    @usableFromInline var head = 0
    /// How many elements are kept.
    public var count: Int { _count }
    @usableFromInline var _count = 0
    /// What the kept elements take, as their appends estimated it.
    public var bytes: Int { _bytes }
    @usableFromInline var _bytes = 0
    /// How many of the oldest elements were forgotten; positions count from the first element ever.
    public var forgotten: Int { _forgotten }
    @usableFromInline var _forgotten = 0
    /// How many times the kept elements were renewed: as many were forgotten since the last renewal as
    /// were kept then. What goes with the elements (a table of pending changes) can turn over with
    /// them.
    public var renewals: Int { _renewals }
    @usableFromInline var _renewals = 0
    @usableFromInline var nextRenewal = 1

    public init(retention: Int? = nil, budget: Int? = nil) {
        precondition(retention.map { $0 > 0 } ?? true, "a retention keeps at least one element")
        precondition(budget.map { $0 > 0 } ?? true, "a memory budget is more than zero bytes")
        self.retention = retention
        self.budget = budget
    }

    /// Appends `element`, which takes `bytes` to keep, after forgetting the oldest elements it does not
    /// fit beside. Returns the oldest one forgotten, if any, for the caller to free once any lock
    /// around this value is released (a few more, when a large element makes room for itself, are
    /// freed here).
    ///
    /// The element is moved in, and the one returned moved out: a history of values with many
    /// references (a log record's strings) costs no retain and release of each when it goes in, and
    /// none when it comes out, only the release that frees it.
    @inlinable
    public mutating func append(_ element: consuming Element, bytes: Int) -> Element? {
        var oldest: Element?
        while _count > 0,
            (retention.map { _count >= $0 } ?? false) || (budget.map { self._bytes + bytes > $0 } ?? false)
        {
            let dropped = removeOldest()
            if oldest == nil { oldest = dropped }
        }
        if _count == slots.count { grow() }
        slots[(head + _count) % slots.count] = (consume element, bytes)
        _count += 1
        self._bytes += bytes
        return oldest
    }

    @inlinable
    mutating func removeOldest() -> Element {
        // Taken out of its slot, not copied: a copy would retain every reference the element holds,
        // in memory long gone cold, only to release them again.
        let (element, bytes) = slots[head].take()!
        head = (head + 1) % slots.count
        _count -= 1
        _bytes -= bytes
        _forgotten += 1
        if _forgotten >= nextRenewal {
            _renewals += 1
            nextRenewal = _forgotten + _count + 1
        }
        return element
    }

    /// Twice the room (up to the retention), the kept elements moved to its start.
    @usableFromInline
    mutating func grow() {
        var capacity = max(16, 2 * slots.count)
        if let retention { capacity = min(capacity, retention) }
        var larger: [(element: Element, bytes: Int)?] = []
        larger.reserveCapacity(capacity)
        for index in 0..<_count { larger.append(slots[(head + index) % slots.count].take()) }
        larger.append(contentsOf: repeatElement(nil, count: capacity - _count))
        slots = larger
        head = 0
    }

    /// Every kept element, oldest first.
    @inlinable
    public var all: [Element] { (0..<_count).map { slots[(head + $0) % slots.count]!.element } }

    /// Calls `body` with every kept element, oldest first, without copying them into an array.
    @inlinable
    public func forEach(_ body: (Element) throws -> Void) rethrows {
        for index in 0..<_count { try body(slots[(head + index) % slots.count]!.element) }
    }

    /// Changes the element appended `position`-th, if it is still kept; returns whether it was.
    @inlinable @discardableResult
    public mutating func update(position: Int, _ change: (inout Element) -> Void) -> Bool {
        let local = position - _forgotten
        guard local >= 0, local < _count else { return false }
        change(&slots[(head + local) % slots.count]!.element)
        return true
    }

    /// The position the next element appended will have.
    @inlinable
    public var nextPosition: Int { _forgotten + _count }

    /// Forgets everything, positions included.
    public mutating func removeAll() {
        self = BoundedHistory(retention: retention, budget: budget)
    }
}

extension BoundedHistory: Sendable where Element: Sendable {}
