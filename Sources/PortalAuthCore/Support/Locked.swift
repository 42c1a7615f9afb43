#if canImport(Glibc)
import Glibc
#endif

/// A value behind a lock, used as Synchronization's `Mutex` is, but over a plain pthread
/// mutex, so that a forked child can take it (docs/desktop.md "fork()"). `Mutex` on Linux is
/// a priority-inheriting futex whose word holds the owner's thread id, and each thread caches
/// its id: a child's first thread keeps its parent's, the kernel refuses it as the owner of a
/// contended lock, and Swift 6.3 traps there. A pthread mutex needs no id.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    package init(_ initial: sending Value) {
        pthread_mutex_init(mutex, nil)
        value.initialize(to: initial)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held.
    package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
