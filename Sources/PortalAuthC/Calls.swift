import CPortalAuth
import PortalAuthCore
import Synchronization

/// A raw pointer the host gave us to hand back (user_data, dispatcher_data): never
/// dereferenced by the library, only passed through.
struct HostPointer: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
}

/// Where a client's completions run: on the library thread that finished the call, through
/// the host's dispatcher, or from the completion queue on the thread that runs it.
struct Dispatcher: Sendable {
    let dispatch: portal_auth_dispatch_fn?
    let data: HostPointer
    var queue: CompletionQueue? = nil

    static let direct = Dispatcher(dispatch: nil, data: HostPointer(raw: nil))

    /// Through the process's completion queue; nil when it has no descriptor.
    static var queued: Dispatcher? {
        CompletionQueue.shared.map { Dispatcher(dispatch: nil, data: HostPointer(raw: nil), queue: $0) }
    }

    func run(_ completion: @escaping @Sendable () -> Void) {
        if let queue { return queue.push(completion) }
        guard let dispatch else { return completion() }
        let job = Unmanaged.passRetained(Job(completion)).toOpaque()
        dispatch(data.raw, { job in
            guard let job else { return }
            Unmanaged<Job>.fromOpaque(job).takeRetainedValue().completion()
        }, job)
    }

    private final class Job {
        let completion: @Sendable () -> Void
        init(_ completion: @escaping @Sendable () -> Void) { self.completion = completion }
    }
}

/// What a portal_auth_call handle holds: the task running the call, to cancel it.
final class CallBox: Sendable {
    let task: Mutex<Task<Void, Never>?> = Mutex(nil)
}

private typealias CallHandle = Handle<CallBox, portal_auth_call>

/// An asynchronous call refused before it started (a NULL or unusable argument): `*out_call`
/// is cleared, as on every failure path, and the callback is never called.
func refused(_ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?) -> portal_auth_code {
    outCall?.pointee = nil
    return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT)
}

/// Starts `work` on the client; `complete` runs exactly once with its outcome, through the
/// client's dispatcher, after this function has returned.
func startCall<Value: Sendable>(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?,
    work: @escaping @Sendable (PortalAuth) async throws -> Value,
    complete: @escaping @Sendable (Result<Value, any Error>) -> Void
) -> portal_auth_code {
    guard let box = Handle<ClientBox, portal_auth>.object(client) else { return refused(outCall) }
    // The task holds the client itself: a handle freed meanwhile still completes the call.
    let auth = box.auth
    return startTask(dispatcher: box.dispatcher.withLock { $0 }, outCall, work: { try await work(auth) }, complete: complete)
}

/// Runs `work` in a task of its own and hands its outcome to `complete`, exactly once,
/// through `dispatcher`; stores a handle to cancel it in `outCall` when asked.
func startTask<Value: Sendable>(
    dispatcher: Dispatcher,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?,
    work: @escaping @Sendable () async throws -> Value,
    complete: @escaping @Sendable (Result<Value, any Error>) -> Void
) -> portal_auth_code {
    let call = CallBox()
    // On the I/O thread: the call starts, waits and completes there, one hop from the caller.
    let task = Task(executorPreference: PortalAuth.executor) {
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await work())
        } catch {
            outcome = .failure(error)
        }
        dispatcher.run { complete(outcome) }
    }
    call.task.withLock { $0 = task }
    outCall?.pointee = CallHandle.make(call)
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Asks the call to stop. Honoured only before its request is on the wire (a grant sent
/// is spent: the exchange then completes and its session is persisted); the callback still
/// fires exactly once, with PORTAL_AUTH_E_CANCELLED when the cancellation took. NULL and
/// finished calls are ignored.
@c(portal_auth_call_cancel)
public func portalAuthCallCancel(_ call: UnsafeMutablePointer<portal_auth_call>?) {
    CallHandle.object(call)?.task.withLock { $0 }?.cancel()
}

/// Frees a call handle. It does not cancel the call, whose callback still fires. NULL is
/// ignored.
@c(portal_auth_call_free)
public func portalAuthCallFree(_ call: UnsafeMutablePointer<portal_auth_call>?) {
    CallHandle.release(call)
}

/// Installs (or with NULL removes) the client's dispatcher, for calls started from now on.
/// It replaces the completion queue, if the client used it (portal_auth_set_completion_queue).
/// Returns PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL client.
@c(portal_auth_set_dispatcher)
public func portalAuthSetDispatcher(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ dispatch: portal_auth_dispatch_fn?,
    _ dispatcher_data: UnsafeMutableRawPointer?
) -> portal_auth_code {
    guard let box = Handle<ClientBox, portal_auth>.object(client) else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    box.dispatcher.withLock { $0 = Dispatcher(dispatch: dispatch, data: HostPointer(raw: dispatcher_data)) }
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Runs `body` with a borrowed error handle for `error` (nil for success).
func withErrorHandle(_ error: (any Error)?, _ body: (UnsafePointer<portal_auth_error>?) -> Void) {
    guard let error else { return body(nil) }
    let handle = Handle<ErrorBox, portal_auth_error>.make(ErrorBox(error))
    defer { Handle<ErrorBox, portal_auth_error>.release(handle) }
    body(UnsafePointer(handle))
}
