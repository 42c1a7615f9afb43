import CPortalAuth
import PortalAuthCore

/// A raw pointer the host gave us to hand back (user_data, dispatcher_data): never
/// dereferenced by the library, only passed through.
struct HostPointer: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
}

/// Where a client's completions run: on the library thread that finished the call, through
/// the host's dispatcher, or from the completion queue on the thread that runs it.
struct Dispatcher: Sendable {
    let host: HostDispatcher?
    var queue: CompletionQueue? = nil

    static let direct = Dispatcher(host: nil)

    /// Through the process's completion queue; nil when it has no descriptor.
    static var queued: Dispatcher? {
        CompletionQueue.shared.map { Dispatcher(host: nil, queue: $0) }
    }

    func run(_ completion: @escaping @Sendable () -> Void) {
        if let queue { return queue.push(completion) }
        guard let host else { return completion() }
        let job = Unmanaged.passRetained(Job(completion, host)).toOpaque()
        host.dispatch(host.data.raw, { job in
            guard let job else { return }
            Unmanaged<Job>.fromOpaque(job).takeRetainedValue().completion()
        }, job)
    }

    /// A completion handed to the host's dispatcher. It keeps the dispatcher (and so its
    /// data) until the host has run it.
    private final class Job {
        let completion: @Sendable () -> Void
        let host: HostDispatcher
        init(_ completion: @escaping @Sendable () -> Void, _ host: HostDispatcher) {
            self.completion = completion
            self.host = host
        }
    }
}

/// The host's dispatcher (portal_auth_set_dispatcher) and its data. Held by the client while
/// installed, by each call started with it until its completion has run, and by each job
/// handed to it until the host has run that job; the last of them to let go calls the
/// host's destroy function, so it runs once no job of the dispatcher can run any more.
final class HostDispatcher: Sendable {
    let dispatch: portal_auth_dispatch_fn
    let data: HostPointer
    private let destroy: portal_auth_destroy_fn?

    init(_ dispatch: portal_auth_dispatch_fn, _ data: HostPointer, _ destroy: portal_auth_destroy_fn?) {
        (self.dispatch, self.data, self.destroy) = (dispatch, data, destroy)
    }

    deinit { destroy?(data.raw) }
}

/// The client whose call lent a session to the host, while that client lives, and the
/// completion queue that call completed from, if any: the session's invalidation completes
/// the same way (docs/desktop.md "C ABI contract"). The queue is held, not watched: a weak
/// reference to the process's queue would never be let go of.
struct SessionLender: Sendable {
    weak var client: ClientBox?
    let queue: CompletionQueue?

    /// Through the lending client's dispatcher while the client lives; once it is freed,
    /// from the queue the lending call completed from, else on a library thread.
    var route: Dispatcher {
        if let client { return client.dispatcher.withLock { $0 } }
        return queue.map { Dispatcher(host: nil, queue: $0) } ?? .direct
    }
}

/// What a portal_auth_call handle holds: the task running the call, to cancel it.
final class CallBox: Sendable, ProcessBound {
    let task: Locked<Task<Void, Never>?> = Locked(nil)
    let generation = ProcessFork.generation
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
    startLendingCall(client, outCall, work: work) { outcome, _ in complete(outcome) }
}

/// startCall for the calls whose outcome may lend a session: `complete` also receives the
/// lender to give the session handle (withSessionHandle, deliver).
func startLendingCall<Value: Sendable>(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?,
    work: @escaping @Sendable (PortalAuth) async throws -> Value,
    complete: @escaping @Sendable (Result<Value, any Error>, SessionLender) -> Void
) -> portal_auth_code {
    guard let box = Handle<ClientBox, portal_auth>.object(client) else { return refused(outCall) }
    // The task holds the client itself: a handle freed meanwhile still completes the call.
    let auth = box.auth
    let (dispatcher, lender) = box.lendingRoute()
    return startTask(dispatcher: dispatcher, outCall, work: { try await work(auth) }) { complete($0, lender) }
}

extension ClientBox {
    /// The dispatcher of a call started now, and the lender of the sessions it hands out.
    func lendingRoute() -> (dispatcher: Dispatcher, lender: SessionLender) {
        let dispatcher = self.dispatcher.withLock { $0 }
        return (dispatcher, SessionLender(client: self, queue: dispatcher.queue))
    }
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
    // The handle is the host's before the call can complete, on another thread that runs the
    // queue or on the I/O thread: a host that frees where it keeps it in the completion
    // never has it written there afterwards.
    outCall?.pointee = CallHandle.make(call)
    let finish: @Sendable (Result<Value, any Error>) -> Void = { outcome in dispatcher.run { complete(outcome) } }
    let task: Task<Void, Never>
    if let queue = dispatcher.queue {
        // On the thread that runs the queue: the call starts, sends, waits and completes in
        // its runs, with its requests on the queue's own connections. The I/O thread is
        // started first: it goes on with the call if the host stops running the queue.
        _ = PortalAuth.executor
        task = Task(executorPreference: queue) {
            finish(await PortalAuth.driven(by: queue) { await outcome(of: work) })
        }
    } else {
        // On the I/O thread: the call starts, waits and completes there, one hop from the caller.
        task = Task(executorPreference: PortalAuth.executor) { finish(await outcome(of: work)) }
    }
    call.task.withLock { $0 = task }
    return portal_auth_code(PORTAL_AUTH_OK)
}

private func outcome<Value>(of work: @Sendable () async throws -> Value) async -> Result<Value, any Error> {
    do {
        return .success(try await work())
    } catch {
        return .failure(error)
    }
}

/// See portal_auth_call_cancel in include/portal_auth.h.
@c(portal_auth_call_cancel)
public func portalAuthCallCancel(_ call: UnsafeMutablePointer<portal_auth_call>?) {
    CallHandle.object(call)?.task.withLock { $0 }?.cancel()
}

/// See portal_auth_call_free in include/portal_auth.h.
@c(portal_auth_call_free)
public func portalAuthCallFree(_ call: UnsafeMutablePointer<portal_auth_call>?) {
    CallHandle.release(call)
}

/// See portal_auth_set_dispatcher in include/portal_auth.h.
@c(portal_auth_set_dispatcher)
public func portalAuthSetDispatcher(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ dispatch: portal_auth_dispatch_fn?,
    _ dispatcher_data: UnsafeMutableRawPointer?,
    _ destroy: portal_auth_destroy_fn?
) -> portal_auth_code {
    let data = HostPointer(raw: dispatcher_data)
    guard let box = Handle<ClientBox, portal_auth>.object(client) else {
        destroy?(data.raw)
        return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT)
    }
    guard let dispatch else {
        destroy?(data.raw)
        box.use(.direct)
        return portal_auth_code(PORTAL_AUTH_OK)
    }
    box.use(Dispatcher(host: HostDispatcher(dispatch, data, destroy)))
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Runs `body` with a borrowed error handle for `error` (nil for success).
func withErrorHandle(_ error: (any Error)?, _ body: (UnsafePointer<portal_auth_error>?) -> Void) {
    guard let error else { return body(nil) }
    let handle = Handle<ErrorBox, portal_auth_error>.make(ErrorBox(error))
    defer { Handle<ErrorBox, portal_auth_error>.release(handle) }
    body(UnsafePointer(handle))
}
