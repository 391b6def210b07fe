import NIOCore

extension Duration {
    /// The same span as NIO's `TimeAmount`, to the nanosecond; held to what a `TimeAmount` can hold
    /// (about 292 years either way) rather than trapping.
    public var timeAmount: TimeAmount {
        let (seconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .nanoseconds(components.seconds < 0 ? .min : .max) }
        let (total, overflowAgain) = seconds.addingReportingOverflow(components.attoseconds / 1_000_000_000)
        guard !overflowAgain else { return .nanoseconds(seconds < 0 ? .min : .max) }
        return .nanoseconds(total)
    }
}
