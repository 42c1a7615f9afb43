import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Threads of the library's own, for work that blocks (the HTTP loop, a loopback listener's
/// wait, reaping a browser process) and so must not hold a thread of Swift's cooperative pool.
enum DetachedThread {
    private final class Start {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Runs `body` on a new detached thread named `name` (at most 15 bytes show in ps and gdb).
    /// - Returns: 0, or the error of `pthread_create` when no thread could be made (then
    ///   `body` never runs).
    static func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }

        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { context in
            guard let context else { return nil }
            let start = Unmanaged<Start>.fromOpaque(context).takeRetainedValue()
            start.name.withCString { pa_set_thread_name($0) }
            start.body()
            return nil
        }, context)
        if result != 0 { Unmanaged<Start>.fromOpaque(context).release() }
        return result
    }
}
