/// The running instance's side of redirect forwarding (docs/desktop.md "Redirect
/// forwarding"): a custom-scheme redirect (`myapp://auth/callback?…`) makes the desktop
/// start the app's URL handler as a new process, which forwards the URL here
/// (`forwardRedirect`) instead of signing in on its own.
extension PortalAuth {
    /// Listens on the redirect channel of this user, `applicationId` and environment: from
    /// the moment this returns, the application's next instances can forward to it
    /// (`forwardRedirect`), and are answered at once; what they forward waits until
    /// `RedirectListener.run` handles it. With an `applicationId`, it also owns that name on
    /// the session bus, where the desktop hands a `DBusActivatable` application the URLs it
    /// opens (`ApplicationBus`), and takes those alike; without a session bus, or with the
    /// name owned by another process, it listens on the channel alone (and logs why).
    /// - Throws: `PortalAuthSignInError.unavailable` with `noRuntimeDirectory`,
    ///   `runtimeDirectoryUnsafe`, `channelInUse` (another instance listens) or
    ///   `channelFailed`; `closed` when the client's waits have been ended (`endWaits`).
    public func listenForRedirects() throws(PortalAuthSignInError) -> RedirectListener {
        try listenForRedirects(in: RuntimeFolder.path)
    }

    /// As `listenForRedirects()`, with the channel in `runtimeDirectory` rather than
    /// `$XDG_RUNTIME_DIR`.
    func listenForRedirects(in runtimeDirectory: String?) throws(PortalAuthSignInError) -> RedirectListener {
        let receiver: RedirectReceiver
        do {
            let channel = try RedirectChannel(applicationId: applicationId, environmentId: authEnvironmentId,
                                              runtimeDirectory: runtimeDirectory)
            receiver = try RedirectReceiver(channel, redirectUrl: redirectUrl)
        } catch {
            PortalAuthLog.emit(.warning, "Redirect forwarding: cannot listen: \(error).")
            throw error
        }
        // The bus's name, once owned, goes when the listening ends, however it ends.
        let bus = Locked<ApplicationBus?>(nil)
        let stopBus: @Sendable () -> Void = { bus.withLock { $0 }?.stop() }
        guard let registration = waits.register({
            receiver.close()
            stopBus()
        }) else {
            receiver.close()
            throw .closed(reason: .clientClosed)
        }
        // Taking URLs from now on, on the receiver's own thread: a forward is answered however
        // long the task that runs the listener takes to start.
        let queue = RedirectQueue()
        let ending = ReceiverEnding()
        do {
            try receiver.start(take: queue.offer) { how in
                ending.how.withLock { $0 = how }
                stopBus()
                queue.end()
            }
        } catch {
            waits.unregister(registration)
            throw error
        }
        if let applicationId {
            let configured = redirectUrl
            switch ApplicationBus.start(name: applicationId, take: { url in
                let taken = ForwardedLine.carries(url, configured: configured) && queue.offer(url)
                PortalAuthLog.emit(taken ? .info : .warning,
                                   taken ? "Redirect forwarding: took a redirect the desktop opened." : "Redirect forwarding: refused a URL the desktop opened that is not a redirect of this client.")
            }) {
            case .success(let started):
                bus.withLock { $0 = started }
                // The receiver may have ended meanwhile: its ending found no bus to stop.
                if ending.how.withLock({ $0 }) != nil { started.stop() }
            case .failure(let failure):
                PortalAuthLog.emit(.info, "Redirect forwarding: not on the session bus as \(applicationId) (\(failure.reason)); listening on the redirect channel alone.")
            }
        }
        PortalAuthLog.emit(.info, "Redirect forwarding: listening for the redirects of the application's next instances.")
        return RedirectListener(client: self, receiver: receiver, registration: registration, queue: queue, ending: ending,
                                stopBus: stopBus)
    }
}

/// A client listening on its redirect channel (`PortalAuth.listenForRedirects()`). Letting
/// it go without `run` stops listening.
public final class RedirectListener: Sendable {
    private let client: PortalAuth
    private let receiver: RedirectReceiver
    private let registration: ClientWaits.Registration
    /// What the receiver took, in order, until it ended, and how it ended.
    private let queue: RedirectQueue
    private let ending: ReceiverEnding
    /// Lets the application's name on the session bus go, if it was owned.
    private let stopBus: @Sendable () -> Void
    /// The queue has one reader: a second `run` ends at once.
    private let ran = Locked(false)

    fileprivate init(client: PortalAuth, receiver: RedirectReceiver, registration: ClientWaits.Registration,
                     queue: RedirectQueue, ending: ReceiverEnding, stopBus: @escaping @Sendable () -> Void) {
        self.client = client
        self.receiver = receiver
        self.registration = registration
        self.queue = queue
        self.ending = ending
        self.stopBus = stopBus
    }

    deinit {
        receiver.close()
        stopBus()
        client.waits.unregister(registration)
    }

    /// Handles each redirect forwarded to the channel as `handleRedirect` would: `onRedirect`
    /// receives its outcome (a result; nil for a URL that is not a sign-in redirect; or an
    /// error), one at a time, in the order they came. A forwarded magic link completes a
    /// `signInWithMagicLink` that waits for it. Runs until the task is cancelled or the
    /// client's waits are ended (`endWaits`); redirects already taken are handled, and reach
    /// `onRedirect`, before it ends.
    /// - Throws: `PortalAuthSignInError.closed` when it ends so (also when run again);
    ///   `.unavailable(channelFailed)` when the channel fails.
    public func run(_ onRedirect: @escaping @Sendable (Result<AuthResult?, any Error>) -> Void) async throws -> Never {
        // Run again: its listening has ended, as a cancel ends it.
        guard !ran.withLock({ ran in defer { ran = true }; return ran }) else { throw PortalAuthSignInError.closed(reason: .cancelled) }
        let queue = queue
        await withTaskCancellationHandler {
            while let url = await queue.next() {
                // Not cancelled with the listening: the instance that forwarded it was told
                // it was taken, and a grant sent is spent (docs/protocol.md §5). On the
                // listening's own thread: the completion queue when it drives the listening.
                let outcome = await Task(executorPreference: HTTPEngine.currentExecutor) { [client] () -> Result<AuthResult?, any Error> in
                    do {
                        return .success(try await client.handleRedirect(url))
                    } catch {
                        return .failure(error)
                    }
                }.value
                onRedirect(outcome)
            }
        } onCancel: {
            receiver.stop()
        }
        if case .failed? = ending.how.withLock({ $0 }) {
            throw PortalAuthSignInError.unavailable(reason: .channelFailed, detail: "the channel stopped")
        }
        PortalAuthLog.emit(.info, "Redirect forwarding: stopped listening.")
        throw PortalAuthSignInError.closed(reason: client.waits.stoppedReason)
    }
}

/// How a listener's receiver ended, once it has: set on the receiver's thread, read by `run`.
final class ReceiverEnding: Sendable {
    let how = Locked<RedirectReceiver.Ending?>(nil)
}
