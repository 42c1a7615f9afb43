/// Where a browser opener runs: a thread of its own for each sign-in, never the library's
/// I/O thread (`portal-auth-io`), which carries every request of the process. An opener may
/// take its time (a host that waits for the browser, the default one's grace for a failing
/// command) and may call the library and wait for the result; either would stall or
/// deadlock every call in the process on the I/O thread. So a slow opener delays only its
/// own sign-in.
enum OpenerThread {
    struct NoThread: Error {}

    /// Runs `opener(url, ephemeral)` on a new thread and returns once it has; not at all once
    /// `waits` have ended (the host has let the client go), checked on that thread just
    /// before the call.
    /// - Throws: what the opener throws, `ClientWaits.Ended` when the waits had ended, or
    ///   `NoThread` when no thread could be made.
    static func run(_ opener: @escaping BrowserOpener, url: String, ephemeral: Bool, unlessEnded waits: ClientWaits) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let started = DetachedThread.start(name: "portal-auth-opn") {
                continuation.resume(with: Result {
                    if waits.haveEnded { throw ClientWaits.Ended() }
                    try opener(url, ephemeral)
                })
            }
            if started != 0 {
                PortalAuthLog.emit(.error, "Browser sign-in: no thread for the browser opener (error \(started)).")
                continuation.resume(throwing: NoThread())
            }
        }
    }
}
