import CPortalAuth
import PortalAuthCore

/// What a portal_auth_completion_queue handle holds: a queue of the host's, which the host
/// runs until it frees the handle, and the I/O thread after (`CompletionQueue.retire`).
final class QueueBox: Sendable, ProcessBound {
    let queue: CompletionQueue
    let generation = ProcessFork.generation

    init(_ queue: CompletionQueue) {
        self.queue = queue
    }

    deinit { queue.retire() }
}

typealias QueueHandle = Handle<QueueBox, portal_auth_completion_queue>

/// See portal_auth_completion_queue_new in include/portal_auth.h.
@c(portal_auth_completion_queue_new)
public func portalAuthCompletionQueueNew(_ out_queue: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_completion_queue>?>?) -> portal_auth_code {
    guard let out_queue else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    out_queue.pointee = nil
    guard let queue = CompletionQueue.hostQueue() else { return portal_auth_code(PORTAL_AUTH_E_INTERNAL) }
    out_queue.pointee = QueueHandle.make(QueueBox(queue))
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// See portal_auth_completion_queue_free in include/portal_auth.h.
@c(portal_auth_completion_queue_free)
public func portalAuthCompletionQueueFree(_ queue: UnsafeMutablePointer<portal_auth_completion_queue>?) {
    QueueHandle.release(queue)
}

/// See portal_auth_completion_queue_fd in include/portal_auth.h.
@c(portal_auth_completion_queue_fd)
public func portalAuthCompletionQueueFd(_ queue: UnsafePointer<portal_auth_completion_queue>?) -> Int32 {
    QueueHandle.object(queue)?.queue.descriptor ?? -1
}

/// See portal_auth_completion_queue_run in include/portal_auth.h.
@discardableResult
@c(portal_auth_completion_queue_run)
public func portalAuthCompletionQueueRun(_ queue: UnsafeMutablePointer<portal_auth_completion_queue>?) -> UInt {
    UInt(QueueHandle.object(queue)?.queue.run() ?? 0)
}
