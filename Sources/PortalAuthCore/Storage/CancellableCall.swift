import CSecret

/// A blocking call of a store's (libsecret's, the Secret portal's) that the calling task's
/// cancel ends: the call's `GCancellable`, which the store hands to the C side, is cancelled
/// with the task. GCancellable is thread-safe.
final class CancellableCall: @unchecked Sendable {
    /// Only ever read; nil for a call made without one.
    let cancellable: UnsafeMutablePointer<GCancellable>?

    private init(cancellable: Bool) {
        self.cancellable = cancellable ? g_cancellable_new() : nil
    }

    deinit {
        if let cancellable { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
    }

    private var wasCancelled: Bool { cancellable.map { g_cancellable_is_cancelled($0) != 0 } ?? false }

    /// Runs `work` on `thread`, given a `GCancellable` when `cancellable` (else nil), which
    /// the calling task's cancel cancels. The store's error that a cancelled wait ends in
    /// (`endsWait` tells which it is) is thrown as `CancellationError`: the call was cancelled.
    static func run<T: Sendable>(on thread: SerialThread, cancellable: Bool,
                                 endsWait: (SessionStorageError) -> Bool = { _ in true },
                                 _ work: @escaping @Sendable (UnsafeMutablePointer<GCancellable>?) throws -> T) async throws -> T {
        let call = CancellableCall(cancellable: cancellable)
        do {
            return try await withTaskCancellationHandler {
                try await thread.perform { try work(call.cancellable) }
            } onCancel: {
                if let cancellable = call.cancellable { g_cancellable_cancel(cancellable) }
            }
        } catch let error as SessionStorageError where call.wasCancelled && endsWait(error) {
            throw CancellationError()
        }
    }
}
