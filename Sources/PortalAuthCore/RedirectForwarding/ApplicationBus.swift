import CDesktop

/// The application's name on the session bus, where the desktop hands a `DBusActivatable`
/// application the URLs it opens (`org.freedesktop.Application.Open`), on no command line
/// (docs/desktop.md "Redirect forwarding"): a listening client owns its application id there,
/// beside its redirect channel, and each URL goes where a forwarded one goes. Only processes
/// of this user reach the session bus, as only they reach the channel.
final class ApplicationBus: Sendable {
    /// Hands each URL of an Open call over, on the bus's thread.
    private final class Take: Sendable {
        let take: @Sendable (String) -> Void
        init(_ take: @escaping @Sendable (String) -> Void) {
            self.take = take
        }
    }

    /// The C side's bus, which the first `stop` takes.
    private struct Served: @unchecked Sendable {
        let bus: OpaquePointer
    }

    private let served: Locked<Served?>
    /// Open once the first `stop` has stopped the bus, for the others to wait on.
    private let stopped = Latch()
    private let take: Unmanaged<Take>

    private init(_ bus: OpaquePointer, _ take: Unmanaged<Take>) {
        served = Locked(Served(bus: bus))
        self.take = take
    }

    deinit {
        stop()
        take.release()
    }

    /// Owns `name` and serves it on a thread of its own; `take` gets each URL opened there.
    /// - Returns: the bus, or why not (no session bus, another owner, no libsecret's GIO, a
    ///   forked child whose GLib is its parent's: GDBus there has no thread to talk to the bus).
    static func start(name: String, take: @escaping @Sendable (String) -> Void) -> Result<ApplicationBus, ApplicationBusError> {
        if ProcessFork.inheritsGIO {
            return .failure(ApplicationBusError(reason: "this process was forked from one that used GLib's D-Bus"))
        }
        let context = Unmanaged.passRetained(Take(take))
        var why = [CChar](repeating: 0, count: 256)
        let started = pa_application_bus_start(name, { context, uri in
            guard let context, let uri else { return }
            Unmanaged<Take>.fromOpaque(context).takeUnretainedValue().take(String(cString: uri))
        }, context.toOpaque(), &why, why.count)
        guard let started else {
            context.release()
            return .failure(ApplicationBusError(reason: String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(ApplicationBus(started, context))
    }

    /// Lets the name go; no URL is taken once this returns, whichever thread called it first.
    func stop() {
        let stopping = served.withLock { served in
            defer { served = nil }
            return served
        }
        guard let stopping else { return stopped.wait() }
        pa_application_bus_stop(stopping.bus)
        stopped.open()
    }
}

/// Why the application is not on the session bus; never a URL.
struct ApplicationBusError: Error {
    let reason: String
}
