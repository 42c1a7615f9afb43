#if canImport(Glibc)
import Glibc
#endif

/// A one-way signal between threads: once opened, every wait returns at once. A condition
/// variable, not a descriptor: a process short of descriptors can still use one.
final class Latch: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isOpen = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    func open() {
        pthread_mutex_lock(mutex)
        isOpen = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until it is open.
    func wait() {
        pthread_mutex_lock(mutex)
        while !isOpen { pthread_cond_wait(changed, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
