import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// An eventfd one thread signals and another waits on with poll: the wake-up of a thread
/// that sleeps in poll (the HTTP loop, a loopback listener). Signals before the wait are
/// kept, so one cannot be lost between a check and the wait.
final class WakeSignal: Sendable {
    let fd: Int32

    /// Nil when no descriptor is left.
    init?() {
        fd = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard fd >= 0 else { return nil }
    }

    /// Over an eventfd made elsewhere (non-blocking), which it closes at deinit.
    init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit { _ = close(fd) }

    func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
    }

    /// Forgets the signals received so far (after the wait that they ended).
    func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, MemoryLayout<UInt64>.size)
    }

    /// Drains a signal that has been sent or is about to be: waits for it to land if it has
    /// not yet (its sender is between deciding to signal and the write).
    func drainLanded() {
        var count: UInt64 = 0
        var watched = pollDescriptor
        while read(fd, &count, MemoryLayout<UInt64>.size) < 0, errno == EAGAIN || errno == EINTR {
            _ = poll(&watched, 1, -1)
        }
    }

    /// Waits until a signal has been sent, and leaves it there: every thread that waits sees
    /// it (a signal that says something has ended, rather than a wake-up to take).
    func waitUntilSignalled() {
        var watched = pollDescriptor
        while poll(&watched, 1, -1) < 0 && errno == EINTR {}
    }

    var pollDescriptor: pollfd { pollfd(fd: fd, events: Int16(POLLIN), revents: 0) }
}
