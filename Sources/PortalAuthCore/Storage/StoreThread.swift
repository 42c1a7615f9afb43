import CSecret

/// Where a store's blocking calls run (libsecret's, the Secret portal's, a file's, a host's
/// callbacks): one at a time, in order, on a thread of the store's (`SerialThread`), never on
/// the caller's thread or the HTTP thread. Each process has its own: a forked child's calls
/// run on a thread of the child's. A call that may wait on a dialog is given a `GCancellable`,
/// which the calling task's cancel cancels.
struct StoreThread: Sendable {
    private let thread: PerProcess<SerialThread>

    /// - Parameter name: the thread's, for ps and debuggers (at most 15 bytes).
    init(name: String) {
        thread = PerProcess { SerialThread(name: name) }
    }

    /// Runs `work` on the thread, its outcome returned to the awaiting task.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await thread.value.perform(work)
    }

    /// Runs `work` on the thread, given a `GCancellable` when `cancellable` (else nil), which
    /// the calling task's cancel cancels. The store's error that a cancelled wait ends in
    /// (`endsWait` tells which it is) is thrown as `CancellationError`: the call was cancelled.
    func run<T: Sendable>(cancellable: Bool, endsWait: (SessionStorageError) -> Bool = { _ in true },
                          _ work: @escaping @Sendable (UnsafeMutablePointer<GCancellable>?) throws -> T) async throws -> T {
        let call = Cancellation(cancellable)
        do {
            return try await withTaskCancellationHandler {
                try await run { try work(call.cancellable) }
            } onCancel: {
                call.cancel()
            }
        } catch let error as SessionStorageError where call.wasCancelled && endsWait(error) {
            throw CancellationError()
        }
    }

    /// One call's `GCancellable` (GLib's are thread-safe), released with it.
    private final class Cancellation: @unchecked Sendable {
        /// Only ever read; nil for a call made without one.
        let cancellable: UnsafeMutablePointer<GCancellable>?

        init(_ cancellable: Bool) {
            self.cancellable = cancellable ? g_cancellable_new() : nil
        }

        deinit {
            if let cancellable { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        }

        func cancel() {
            if let cancellable { g_cancellable_cancel(cancellable) }
        }

        var wasCancelled: Bool { cancellable.map { g_cancellable_is_cancelled($0) != 0 } ?? false }
    }
}
