import Synchronization

/// The running instance's side of redirect forwarding (docs/desktop.md "Redirect
/// forwarding"): a custom-scheme redirect (`myapp://auth/callback?…`) makes the desktop
/// start the app's URL handler as a new process, which forwards the URL here
/// (`forwardRedirect`) instead of signing in on its own.
extension PortalAuth {
    /// Listens for the redirects that the application's next instances forward, on the
    /// channel of this user, `applicationId` and environment, and handles each as
    /// `handleRedirect` would: `onRedirect` receives its outcome (a result, nil for a URL
    /// that is not a sign-in redirect, or an error), one at a time, in the order they came.
    /// A forwarded magic link completes a `signInWithMagicLink` that waits for it.
    ///
    /// It runs until the task is cancelled or the client's waits are ended (`endWaits`);
    /// redirects already taken are handled (and reach `onRedirect`) before it returns.
    ///
    /// - Throws: `PortalAuthSignInError.closed` when it ends so; `.unavailable` when it
    ///   cannot listen: `noRuntimeDirectory`, `runtimeDirectoryUnsafe`, `channelInUse`
    ///   (another instance listens), `channelFailed`.
    public func listenForRedirects(_ onRedirect: @escaping @Sendable (Result<AuthResult?, any Error>) -> Void) async throws -> Never {
        let receiver: RedirectReceiver
        do {
            receiver = try RedirectReceiver(RedirectChannel(applicationId: applicationId, environmentId: authEnvironmentId),
                                            redirectUrl: redirectUrl)
        } catch {
            PortalAuthLog.emit(.warning, "Redirect forwarding: cannot listen: \(error).")
            throw error
        }
        let queue = RedirectQueue()
        let endings = ReceiverEnding()
        try receiver.start(take: queue.offer) { how in
            endings.set(how)
            queue.end()
        }
        guard let registration = waits.register({ receiver.close() }) else {
            receiver.close()
            throw PortalAuthSignInError.closed
        }
        defer { waits.unregister(registration) }
        PortalAuthLog.emit(.info, "Redirect forwarding: listening for the redirects of the application's next instances.")

        await withTaskCancellationHandler {
            while let url = await queue.next() {
                // Not cancelled with the listening: the instance that forwarded it was told
                // it was taken, and a grant sent is spent (docs/protocol.md §5).
                let outcome = await Task { () -> Result<AuthResult?, any Error> in
                    do {
                        return .success(try await handleRedirect(url))
                    } catch {
                        return .failure(error)
                    }
                }.value
                onRedirect(outcome)
            }
        } onCancel: {
            receiver.stop()
        }
        if endings.get() == .failed {
            throw PortalAuthSignInError.unavailable(reason: .channelFailed, detail: "the channel stopped")
        }
        PortalAuthLog.emit(.info, "Redirect forwarding: stopped listening.")
        throw PortalAuthSignInError.closed
    }
}

/// How the receiver's wait ended, once it has.
private final class ReceiverEnding: Sendable {
    private let ending = Mutex<RedirectReceiver.Ending?>(nil)

    func set(_ how: RedirectReceiver.Ending) {
        ending.withLock { $0 = how }
    }

    func get() -> RedirectReceiver.Ending? {
        ending.withLock { $0 }
    }
}
