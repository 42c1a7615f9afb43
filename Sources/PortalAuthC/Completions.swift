import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// The completion queue's descriptor, for the host's event loop to watch: readable (POLLIN;
/// EPOLLIN, level-triggered) exactly while the queue has work, completions queued or its
/// calls' work ready (an epoll set). One for the process, made by the first call of this
/// function or of portal_auth_set_completion_queue, and open until the process exits: poll
/// it, never read, write or close it. -1 when no descriptor could be made.
@c(portal_auth_completion_fd)
public func portalAuthCompletionFd() -> Int32 {
    CompletionQueue.shared?.descriptor ?? -1
}

/// Does on the calling thread the queue's ready work (its calls' requests, responses and
/// results), then runs every completion pending, and returns how many completions ran (with
/// portal_auth_set_queued_log_handler, queued log lines count too); 0 when none was. It never
/// waits. Completions that arrive meanwhile wait for the next call, the descriptor readable
/// again. Any thread may call it, also from inside a completion; each completion runs once.
@discardableResult
@c(portal_auth_run_completions)
public func portalAuthRunCompletions() -> UInt {
    UInt(CompletionQueue.shared?.run() ?? 0)
}

/// With PORTAL_AUTH_TRUE, the calls of `client` started from now on run through the
/// completion queue: their work and their completions (exactly once each) only inside
/// portal_auth_run_completions, on the thread that calls it (so never inside the starting
/// call); this replaces the client's dispatcher. With PORTAL_AUTH_FALSE they run and complete on the library thread again (and no
/// dispatcher applies). Calls already started keep the way they were started with.
/// Returns PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL client or another value, and
/// PORTAL_AUTH_E_INTERNAL, leaving the client as it was, when the queue has no descriptor.
@c(portal_auth_set_completion_queue)
public func portalAuthSetCompletionQueue(_ client: UnsafeMutablePointer<portal_auth>?, _ enabled: portal_auth_bool) -> portal_auth_code {
    guard let box = ClientHandle.object(client), enabled == PORTAL_AUTH_TRUE || enabled == PORTAL_AUTH_FALSE else {
        return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT)
    }
    let route: Dispatcher
    if enabled == PORTAL_AUTH_TRUE {
        guard let queued = Dispatcher.queued else { return portal_auth_code(PORTAL_AUTH_E_INTERNAL) }
        route = queued
    } else {
        route = .direct
    }
    box.use(route)
    return portal_auth_code(PORTAL_AUTH_OK)
}
