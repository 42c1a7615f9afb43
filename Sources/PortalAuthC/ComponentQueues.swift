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

/// Makes a queue of the host's own (its descriptor, its connections, its runs). Returns
/// PORTAL_AUTH_E_INVALID_ARGUMENT for a NULL out_queue, and PORTAL_AUTH_E_INTERNAL when no
/// descriptor was left; `*out_queue` is NULL on failure.
@c(portal_auth_completion_queue_new)
public func portalAuthCompletionQueueNew(_ out_queue: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_completion_queue>?>?) -> portal_auth_code {
    guard let out_queue else { return portal_auth_code(PORTAL_AUTH_E_INVALID_ARGUMENT) }
    out_queue.pointee = nil
    guard let queue = CompletionQueue.hostQueue() else { return portal_auth_code(PORTAL_AUTH_E_INTERNAL) }
    out_queue.pointee = QueueHandle.make(QueueBox(queue))
    return portal_auth_code(PORTAL_AUTH_OK)
}

/// Lets go of the host's queue: the I/O thread does its work and runs its completions from
/// then on. NULL is ignored.
@c(portal_auth_completion_queue_free)
public func portalAuthCompletionQueueFree(_ queue: UnsafeMutablePointer<portal_auth_completion_queue>?) {
    QueueHandle.release(queue)
}

/// The queue's descriptor to poll; -1 for NULL.
@c(portal_auth_completion_queue_fd)
public func portalAuthCompletionQueueFd(_ queue: UnsafePointer<portal_auth_completion_queue>?) -> Int32 {
    QueueHandle.object(queue)?.queue.descriptor ?? -1
}

/// Does the queue's ready work and runs its pending completions on the calling thread;
/// returns how many ran, 0 for NULL.
@discardableResult
@c(portal_auth_completion_queue_run)
public func portalAuthCompletionQueueRun(_ queue: UnsafeMutablePointer<portal_auth_completion_queue>?) -> UInt {
    UInt(QueueHandle.object(queue)?.queue.run() ?? 0)
}
