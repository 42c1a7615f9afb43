#if canImport(Glibc)
import Glibc
#endif

/// What became of a redirect forwarded to the application's running instance.
public enum RedirectForwarding: Sendable, Equatable {
    /// The running instance took it, and handles it (its `listenForRedirects` reports the
    /// outcome there). This process has nothing more to do.
    case taken
    /// No instance listens: handle the URL here (`handleRedirect`).
    case noInstance
    /// The URL does not target this client's redirect URL (or is not one `handleRedirect`
    /// would consider), checked here or by the running instance: nothing was handed over,
    /// and `handleRedirect` would return nil for it too.
    case refused
}

/// The next instance's side of redirect forwarding (docs/desktop.md "Redirect forwarding").
extension PortalAuth {
    /// How long forwarding waits for the running instance, for each step (connecting,
    /// sending, its answer).
    public static let defaultForwardTimeout: Duration = .seconds(5)

    /// Hands a redirect URL this process received (as a URL handler started by the desktop)
    /// to the application's running instance of the same user, `applicationId` and
    /// environment, and says whether one took it. Makes no request to Portal, and touches
    /// no keyring.
    ///
    /// - Throws: `PortalAuthSignInError.unavailable` with `noRuntimeDirectory` or
    ///   `runtimeDirectoryUnsafe` (the channel would not be the user's alone; nothing was
    ///   sent), or `channelFailed` (the socket failed, or the instance did not answer in
    ///   time: it may still handle the URL).
    public func forwardRedirect(_ url: String, timeout: Duration = PortalAuth.defaultForwardTimeout) async throws -> RedirectForwarding {
        try await forwardRedirect(url, timeout: timeout, in: RuntimeFolder.path)
    }

    /// As `forwardRedirect(_:timeout:)`, with the channel in `runtimeDirectory` rather than
    /// `$XDG_RUNTIME_DIR`.
    func forwardRedirect(_ url: String, timeout: Duration, in runtimeDirectory: String?) async throws -> RedirectForwarding {
        guard timeout > .zero else { throw PortalAuthError.invalidArgument(name: "timeout") }
        guard ForwardedLine.carries(url, configured: redirectUrl) else {
            PortalAuthLog.emit(.info, "Redirect forwarding: the URL is not a redirect of this client; nothing was forwarded.")
            return .refused
        }
        let channel = try RedirectChannel(applicationId: applicationId, environmentId: authEnvironmentId,
                                          runtimeDirectory: runtimeDirectory)
        let message = ForwardedLine.message(url)
        let outcome: Result<RedirectForwarding, PortalAuthSignInError> = await withCheckedContinuation { continuation in
            // Blocking socket calls, bounded by the timeout: a thread of their own, never the
            // I/O thread or Swift's pool.
            let started = DetachedThread.start(name: "portal-auth-fwd") {
                continuation.resume(returning: Result { () throws(PortalAuthSignInError) in
                    try Self.forward(message, on: channel, timeout: timeout)
                })
            }
            if started != 0 {
                continuation.resume(returning: .failure(.unavailable(reason: .channelFailed, detail: "no thread (error \(started))")))
            }
        }
        switch outcome {
        case .success(.taken): PortalAuthLog.emit(.info, "Redirect forwarding: the running instance took the redirect.")
        case .success(.noInstance): PortalAuthLog.emit(.info, "Redirect forwarding: no instance is running; handle the redirect here.")
        case .success(.refused): PortalAuthLog.emit(.warning, "Redirect forwarding: the running instance refused the redirect.")
        case .failure(let error): PortalAuthLog.emit(.warning, "Redirect forwarding failed: \(error).")
        }
        return try outcome.get()
    }

    /// Sends `message` to the channel's instance and reads its answer (blocking).
    private static func forward(_ message: [UInt8], on channel: RedirectChannel, timeout: Duration) throws(PortalAuthSignInError) -> RedirectForwarding {
        guard case .connected(let fd) = try ChannelSocket.connect(to: channel.socketPath, timeout: timeout) else { return .noInstance }
        defer { _ = close(fd) }
        guard ChannelSocket.peerIsThisUser(fd) else {
            throw .unavailable(reason: .runtimeDirectoryUnsafe, detail: "the channel's socket is another user's")
        }
        var sent = 0
        while sent < message.count {
            let count = message[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .unavailable(reason: .channelFailed, detail: "the running instance did not take the message (errno \(errno))") }
            sent += count
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16)
        while answer.count < 16, answer.last != UInt8(ascii: "\n") {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            answer += chunk[..<count]
        }
        switch ForwardedLine.Reply(answer[...]) {
        case .taken?: return .taken
        case .refused?: return .refused
        case nil: throw .unavailable(reason: .channelFailed, detail: "the running instance did not answer in time")
        }
    }
}
