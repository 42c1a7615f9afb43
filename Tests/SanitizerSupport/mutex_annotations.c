/* Synchronization.Mutex (Linux) takes an uncontended lock with atomics inlined into our own,
 * instrumented code, which ThreadSanitizer sees. A contended lock goes through _lockSlow and
 * _unlockSlow inside libswiftSynchronization, which is not instrumented: its spinning
 * atomics and its futex calls are invisible, so TSan reports the state such a lock guards
 * as racing whenever two threads contended for it. Under TSan only, the test binary
 * defines those two functions itself (the inlined fast paths then call these), forwards to
 * the library's, and tells TSan what they did: the lock word is released before an unlock
 * and acquired after a lock. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

void __tsan_acquire(void *address);
void __tsan_release(void *address);

/* Borrowing methods of the ~Copyable _MutexHandle: its address (the lock word's) comes as
 * Swift's self, in the swift_context register, after the arguments. */
#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef __attribute__((swiftcall)) void lock_slow_fn(uint32_t, void *__attribute__((swift_context)));
typedef __attribute__((swiftcall)) bool try_lock_slow_fn(void *__attribute__((swift_context)));
typedef __attribute__((swiftcall)) void unlock_slow_fn(void *__attribute__((swift_context)));

/* The library's function of that name, looked up once into `slot`. Threads that contend
 * for a first lock together may each look it up; the slot is atomic so that is no race. */
static void *library_function(void *_Atomic *slot, const char *name) {
    void *function = atomic_load_explicit(slot, memory_order_acquire);
    if (function) return function;
    function = dlsym(RTLD_NEXT, name);
    if (!function) abort();
    atomic_store_explicit(slot, function, memory_order_release);
    return function;
}

__attribute__((swiftcall)) void lock_slow(uint32_t self_id, void *__attribute__((swift_context)) handle) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void lock_slow(uint32_t self_id, void *__attribute__((swift_context)) handle) {
    static void *_Atomic slot;
    lock_slow_fn *real = (lock_slow_fn *)library_function(&slot, LOCK_SLOW);
    real(self_id, handle);
    __tsan_acquire(handle);
}

__attribute__((swiftcall)) bool try_lock_slow(void *__attribute__((swift_context)) handle) __asm__(TRY_LOCK_SLOW);
__attribute__((swiftcall)) bool try_lock_slow(void *__attribute__((swift_context)) handle) {
    static void *_Atomic slot;
    try_lock_slow_fn *real = (try_lock_slow_fn *)library_function(&slot, TRY_LOCK_SLOW);
    bool locked = real(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}

__attribute__((swiftcall)) void unlock_slow(void *__attribute__((swift_context)) handle) __asm__(UNLOCK_SLOW);
__attribute__((swiftcall)) void unlock_slow(void *__attribute__((swift_context)) handle) {
    static void *_Atomic slot;
    unlock_slow_fn *real = (unlock_slow_fn *)library_function(&slot, UNLOCK_SLOW);
    __tsan_release(handle);
    real(handle);
}
#endif
#endif
