/// How nsurlsessiond treats a download that goes wrong (docs/ios-rules.md U8, U11).
public struct TransferPolicy: Sendable, Equatable {
    /// `timeoutIntervalForRequest`: how long a connection may stay silent (no header, no body byte)
    /// before the attempt counts as timed out. iOS: 60 s.
    public var requestTimeout: Duration = .seconds(60)
    /// `timeoutIntervalForResource`: how long a background task keeps retrying before it fails. iOS: 7 days.
    public var resourceTimeout: Duration = .seconds(7 * 24 * 3600)
    /// The wait before the first retry of a background task; it doubles after each attempt that
    /// received nothing, up to a minute. Apple does not document nsurlsessiond's timing.
    public var retryDelay: Duration = .seconds(1)

    public init() {}
}
