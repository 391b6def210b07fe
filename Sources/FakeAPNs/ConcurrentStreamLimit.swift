/// `SETTINGS_MAX_CONCURRENT_STREAMS` as a provider connection enforces it on requests (RFC 9113
/// section 5.1.2): a limit is in force once the provider acknowledged the SETTINGS frame that carried
/// it, and before any is, NIOHTTP2's default of 100 holds. A stream over the limit in force is a
/// connection error (`PROTOCOL_ERROR`), as NIOHTTP2 has it; APNs's one stream before authentication
/// relies on it.
struct ConcurrentStreamLimit: Equatable {
    /// What a request's streams may number before the provider acknowledged any limit: NIOHTTP2's.
    static let beforeAcknowledgement: UInt32 = 100

    /// The limit each SETTINGS frame sent carries (nil: none), oldest first, until acknowledged.
    private var sent: [UInt32?] = []
    private(set) var inForce = ConcurrentStreamLimit.beforeAcknowledgement
    private(set) var open: Set<Int32> = []
    /// The highest stream accepted: a GOAWAY for a connection error names it.
    private(set) var lastAccepted: Int32 = 0

    /// A SETTINGS frame went out carrying `limit` (nil: it does not set one).
    mutating func sent(_ limit: UInt32?) {
        sent.append(limit)
    }

    /// The provider acknowledged the oldest SETTINGS frame not yet acknowledged: its limit holds.
    mutating func acknowledged() {
        guard !sent.isEmpty else { return }
        if let limit = sent.removeFirst() { inForce = limit }
    }

    /// A request opens `stream`: false when that goes over the limit in force (the connection ends).
    mutating func open(_ stream: Int32) -> Bool {
        guard open.count < Int(inForce) else { return false }
        open.insert(stream)
        lastAccepted = max(lastAccepted, stream)
        return true
    }

    mutating func closed(_ stream: Int32) {
        open.remove(stream)
    }
}
