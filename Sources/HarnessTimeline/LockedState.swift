import Foundation

/// A small lock-protected box, used where state is touched from event-loop threads and tasks alike.
///
/// The standard library's `Synchronization.LockedState` needs macOS 15; this keeps the package building on
/// older Apple systems as well as on Linux.
public final class LockedState<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
