import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small lock-protected box, used where state is touched from event-loop threads and tasks alike.
///
/// The standard library's `Synchronization.Mutex` needs macOS 15; this keeps the package building on
/// older Apple systems as well as on Linux. On Linux the mutex is glibc's adaptive one: it spins a
/// moment before it sleeps. Its holders (FakeAPNs's two event loops, above all) keep it for well under
/// a microsecond, less than a futex's sleep and wake-up take.
public final class LockedState<Value>: @unchecked Sendable {
    private var value: Value
    #if canImport(Glibc)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #else
    private let lock = NSLock()
    #endif

    public init(_ value: Value) {
        self.value = value
        #if canImport(Glibc)
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        let created = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(created == 0, "pthread_mutex_init: \(created)")
        #endif
    }

    #if canImport(Glibc)
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    #endif

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(Glibc)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #else
        lock.lock()
        defer { lock.unlock() }
        #endif
        return try body(&value)
    }
}
