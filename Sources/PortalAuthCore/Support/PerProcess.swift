import CProcess
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A value the library keeps for the whole process (the I/O thread, the completion queue, a
/// storage's thread, the registries of sessions), made on first use, and made anew on first
/// use in a forked child (docs/desktop.md "fork()"). The parent's value is left in the child
/// exactly as it was, never touched there: its locks may be held by threads that do not exist
/// there, its work is the parent's, and its descriptors may be shared with the parent, or (the
/// completion queue's) renewed for the child. So it is never freed there either.
package final class PerProcess<Value: Sendable>: Sendable {
    private final class Made: @unchecked Sendable {
        let generation: UInt64
        let value: Value
        /// The `Made` of the generation before (a parent's), kept but never used or freed:
        /// it stays reachable, as it is, for leak checkers.
        let previous: UnsafeMutableRawPointer?

        init(_ generation: UInt64, _ value: Value, previous: UnsafeMutableRawPointer?) {
            (self.generation, self.value, self.previous) = (generation, value, previous)
        }
    }

    /// Makes the value of a generation, given the previous generation's (nil for the first):
    /// what carries over to the child, read only, since nobody else touches it there.
    private let make: @Sendable (_ previous: Value?) -> Value
    /// The address of the latest `Made` (0: none yet), retained until this goes.
    private let latest = Atomic<UInt>(0)

    package init(_ make: @escaping @Sendable (_ previous: Value?) -> Value) {
        self.make = make
    }

    deinit {
        // This process's value goes with it; a parent's is the parent's.
        if let made = current, made.generation == pa_fork_generation(),
           let pointer = UnsafeRawPointer(bitPattern: latest.load(ordering: .acquiring)) {
            Unmanaged<Made>.fromOpaque(pointer).release()
        }
    }

    package convenience init(_ make: @escaping @Sendable () -> Value) {
        self.init { _ in make() }
    }

    /// This process's value.
    package var value: Value {
        let generation = pa_fork_generation()
        if let made = current, made.generation == generation { return made.value }
        return makeValue()
    }

    private var current: Made? {
        UnsafeRawPointer(bitPattern: latest.load(ordering: .acquiring)).map { Unmanaged<Made>.fromOpaque($0).takeUnretainedValue() }
    }

    private func makeValue() -> Value {
        pa_fork_watch()
        pa_process_lock()
        defer { pa_process_unlock() }
        // Read under the lock: a child counts its generation before anything of it runs.
        let generation = pa_fork_generation()
        let previous = current
        if let previous, previous.generation == generation { return previous.value }
        let made = Made(generation, make(previous?.value), previous: UnsafeMutableRawPointer(bitPattern: latest.load(ordering: .acquiring)))
        latest.store(UInt(bitPattern: Unmanaged.passRetained(made).toOpaque()), ordering: .releasing)
        return made.value
    }
}

/// This process across fork(): which generation it is (0 where the library was loaded, one
/// more in each forked child), counted from the first time anything asks.
package enum ProcessFork {
    package static var generation: UInt64 {
        pa_fork_watch()
        return pa_fork_generation()
    }

    /// A forked child in which GLib's GIO is loaded: by its parent, whose D-Bus connections
    /// all went through a thread of GLib's own that the child does not have, so GDBus here
    /// waits for ever (or by the child itself since: the same is assumed).
    static var inheritsGIO: Bool {
        generation > 0 && dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_NOLOAD) != nil
    }
}
