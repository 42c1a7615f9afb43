import CPortalAuth
import PortalAuthCore

private typealias ClientHandle = Handle<ClientBox, portal_auth>

/// See portal_auth_completion_fd in include/portal_auth.h.
@c(portal_auth_completion_fd)
public func portalAuthCompletionFd() -> Int32 {
    CompletionQueue.shared?.descriptor ?? -1
}

/// See portal_auth_run_completions in include/portal_auth.h.
@discardableResult
@c(portal_auth_run_completions)
public func portalAuthRunCompletions() -> UInt {
    UInt(CompletionQueue.shared?.run() ?? 0)
}

/// See portal_auth_set_completion_queue in include/portal_auth.h.
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
