import Foundation
import Testing
@testable import PortalAuthCore

/// docs/desktop.md "Redirect forwarding": the next instance hands its redirect to the running
/// one over the channel in the user's runtime folder. Each test has a runtime folder of its
/// own (mode 0700), so the channels of tests running together never meet.
@Suite struct RedirectForwardingTests {
    static let application = "com.example.Forwarding"
    /// How long a forward may wait for the running instance here (the library's default is
    /// 5 s). Generous, as the tests run in parallel on a loaded machine: only a broken
    /// channel makes a forward wait this long.
    static let patience: Duration = .seconds(60)

    /// A runtime folder as the desktop session makes one: the user's, mode 0700.
    private func runtimeFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("runtime-\(UUID().uuidString)").path
        guard mkdir(path, 0o700) == 0 else { throw LoopbackClient.Failure(description: "mkdir: errno \(errno)") }
        return path
    }

    private func client(_ emulator: Emulator, environment: String = Env.open, redirectUrl: String = appRedirect,
                        application: String? = RedirectForwardingTests.application) throws -> PortalAuth {
        try PortalAuth(authEnvironmentId: environment, redirectUrl: redirectUrl, apiHost: emulator.apiHost,
                       magicLink: testMagicLink, applicationId: application, storage: MemorySessionStorage())
    }

    /// Listens in `folder` and collects what `run` reports; the task ends with its error.
    private func listen(_ client: PortalAuth, in folder: String) throws -> (Outcomes, Task<Void, any Error>) {
        let listener = try client.listenForRedirects(in: folder)
        let outcomes = Outcomes()
        let running = Task { () async throws -> Void in try await listener.run(outcomes.add) }
        return (outcomes, running)
    }

    @Test func aForwardedRedirectReachesTheRunningClientAndASecondReplays() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let running = try client(emulator)
        let (outcomes, listening) = try listen(running, in: folder)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)

        let next = try client(emulator)
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .taken)
        let first = try #require(try await outcomes.next().get()?.authenticated)
        // The same URL again, as a desktop may deliver it twice: the remembered result.
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .taken)
        let second = try #require(try await outcomes.next().get()?.authenticated)
        #expect(second.session === first.session)
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        // A URL the channel takes but that is no sign-in: nothing, as handleRedirect says.
        #expect(try await next.forwardRedirect(appRedirect + "?nothing=here", timeout: Self.patience, in: folder) == .taken)
        #expect(try await outcomes.next().get() == nil)
        #expect(try await next.restoreSession() == nil, "the next instance signed in nobody")

        listening.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listening.value }
        #expect(!FileManager.default.fileExists(atPath: try RedirectChannel(
            applicationId: Self.application, environmentId: Env.open, runtimeDirectory: folder).socketPath))
    }

    @Test func aURLForAnotherRedirectIsRefusedAndNothingIsSent() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let (outcomes, listening) = try listen(try client(emulator), in: folder)
        let next = try client(emulator)
        for url in ["otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK", "myapp://auth/callback\u{1}?token=t",
                    "", appRedirect + "?" + String(repeating: "a", count: 9000)] {
            #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .refused)
        }
        // An instance configured with another redirect URL refuses it itself.
        let other = try client(emulator, redirectUrl: "otherapp://auth/callback")
        #expect(try await other.forwardRedirect("otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK",
                                                timeout: Self.patience, in: folder) == .refused)
        listening.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listening.value }
        #expect(outcomes.count == 0, "nothing was handled")
        #expect(try await emulator.requests().isEmpty)
    }

    /// The desktop's route for a `DBusActivatable` application: it calls
    /// org.freedesktop.Application.Open on the application's name on the session bus, which a
    /// listening client owns (docs/desktop.md "Redirect forwarding"). A URL of this client's
    /// redirect is handled as a forwarded one; another is refused there; once listening ends
    /// the name is free.
    @Test(.enabled(if: PrivateKeyring.script != nil, "needs the private session bus of scripts/private-keyring.sh"))
    func anOpenCallOnTheSessionBusReachesTheListeningClient() async throws {
        let emulator = try await Emulator.start()
        let application = "com.example.Bus-\(UUID().uuidString.prefix(8))"
        let (outcomes, listening) = try listen(try client(emulator, application: application), in: try runtimeFolder())
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        let path = "/" + application.replacingOccurrences(of: ".", with: "/").replacingOccurrences(of: "-", with: "_")
        func open(_ urls: [String]) throws -> (status: Int32, output: String) {
            let list = "[" + urls.map { "'\($0)'" }.joined(separator: ", ") + "]"
            return try Subprocess.runReportingStatus("/usr/bin/gdbus", ["call", "--session", "--dest", application,
                                                                        "--object-path", path, "--method",
                                                                        "org.freedesktop.Application.Open", list, "{}"])
        }
        #expect(try open(["otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK", url]) == (0, "()\n"))
        #expect(try await outcomes.next().get()?.authenticated != nil)
        #expect(outcomes.count == 1, "the other app's URL was refused")
        listening.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listening.value }
        #expect(try open([url]).status != 0, "nobody owns the name once listening has ended")
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
    }

    @Test func withNoInstanceRunningTheNextInstanceIsToldSo() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let next = try client(emulator)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .noInstance)
        // Another application's, or another environment's, instance is not this one.
        let (_, listening) = try listen(try client(emulator, application: "com.example.Other"), in: folder)
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .noInstance)
        listening.cancel()
        _ = try? await listening.value
        // A socket left by an instance that is gone: no instance either.
        let channel = try RedirectChannel(applicationId: Self.application, environmentId: Env.open, runtimeDirectory: folder)
        let stale = try ChannelSocket.listen(at: channel.socketPath)
        close(stale)
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .noInstance)
        // ... and the next instance to listen replaces it.
        let (outcomes, replacing) = try listen(try client(emulator), in: folder)
        #expect(try await next.forwardRedirect(url, timeout: Self.patience, in: folder) == .taken)
        #expect(try await outcomes.next().get()?.authenticated != nil)
        replacing.cancel()
        _ = try? await replacing.value
    }

    @Test func oneInstanceListensAtATime() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let (_, listening) = try listen(try client(emulator), in: folder)
        #expect(throws: PortalAuthSignInError.unavailable(reason: .channelInUse, detail: nil)) {
            _ = try client(emulator).listenForRedirects(in: folder)
        }
        listening.cancel()
        _ = try? await listening.value
        // Released once it ended: the next one listens.
        let (_, again) = try listen(try client(emulator), in: folder)
        again.cancel()
        _ = try? await again.value
    }

    @Test func aRuntimeFolderOthersCanReachIsRefusedAtBothEnds() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        chmod(folder, 0o755)
        let unsafe = PortalAuthSignInError.unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(folder) has mode 755, not 700")
        #expect(throws: unsafe) { _ = try client(emulator).listenForRedirects(in: folder) }
        await #expect(throws: unsafe) { _ = try await client(emulator).forwardRedirect(appRedirect + "?token=t", timeout: Self.patience, in: folder) }
        // The channels' own folder, opened wider by someone.
        chmod(folder, 0o700)
        let channels = folder + "/" + RedirectChannel.folderName
        mkdir(channels, 0o700)
        chmod(channels, 0o770)
        #expect(throws: PortalAuthSignInError.unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(channels) has mode 770, not 700")) {
            _ = try client(emulator).listenForRedirects(in: folder)
        }
        // A link planted in its place is not followed.
        rmdir(channels)
        symlink("/tmp", channels)
        #expect(throws: PortalAuthSignInError.unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(channels) is not a folder")) {
            _ = try client(emulator).listenForRedirects(in: folder)
        }
        // No runtime folder at all.
        for missing in [nil, "relative/path", folder + "/missing"] {
            let listening = try client(emulator)
            do {
                _ = try listening.listenForRedirects(in: missing)
                Issue.record("listened without a runtime folder (\(missing ?? "unset"))")
            } catch .unavailable(.noRuntimeDirectory, _, _) {
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func hostileLocalClientsCannotStallTheChannel() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let (outcomes, listening) = try listen(try client(emulator), in: folder)
        let path = try RedirectChannel(applicationId: Self.application, environmentId: Env.open, runtimeDirectory: folder).socketPath
        // Garbage is refused, a message longer than any redirect is refused and cut off, and
        // neither is handled.
        #expect(try ChannelPeer.exchange(path, Array("\u{16}\u{3}\u{1}garbage\n".utf8)) == "refused\n")
        #expect(try ChannelPeer.exchange(path, [0xFF, 0xFE] + Array("\n".utf8)) == "refused\n")
        _ = try? ChannelPeer.exchange(path, [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
        // Slow ones: more than it reads at once, each saying nothing or half a line.
        let slow = try (0..<20).map { index -> Int32 in
            let fd = try ChannelPeer.connect(path)
            if index % 2 == 0 { _ = send(fd, "myapp://auth", 12, Int32(MSG_NOSIGNAL)) }
            return fd
        }
        defer { slow.forEach { close($0) } }
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        #expect(try await client(emulator).forwardRedirect(url, timeout: Self.patience, in: folder) == .taken)
        #expect(try await outcomes.next().get()?.authenticated != nil)
        #expect(outcomes.count == 1, "only the real redirect was handled")
        listening.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listening.value }
    }

    @Test func aForwardedMagicLinkCompletesTheSignInThatWaitsForIt() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let (loopback, redirectUrl, port) = try await loopbackClient(emulator)
        let running = try client(emulator, environment: loopback.authEnvironmentId, redirectUrl: redirectUrl)
        let (outcomes, listening) = try listen(running, in: folder)
        let email = uniqueEmail("forwarded")
        let signIn = Task { try await running.signInWithMagicLink(email) }
        let mail = try #require(try await emulator.mail(to: email).last)

        let next = try client(emulator, environment: loopback.authEnvironmentId, redirectUrl: redirectUrl)
        #expect(try await next.forwardRedirect(mail.link, timeout: Self.patience, in: folder) == .taken)
        let signedIn = try #require(try await signIn.value.authenticated)
        let forwarded = try #require(try await outcomes.next().get()?.authenticated)
        #expect(forwarded.session === signedIn.session)
        #expect(try await emulator.requests("/magic-links/validations").count == 1)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED, "the sign-in's listener stopped")
        listening.cancel()
        _ = try? await listening.value
    }

    @Test func endWaitsEndsListeningAndReleasesTheChannel() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let running = try client(emulator)
        let (_, listening) = try listen(running, in: folder)
        running.endWaits()
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        #expect(try await client(emulator).forwardRedirect(url, timeout: Self.patience, in: folder) == .noInstance)
        await #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { try await listening.value }
        #expect(throws: PortalAuthSignInError.closed(reason: .clientClosed)) { _ = try running.listenForRedirects(in: folder) }
        let (_, next) = try listen(try client(emulator), in: folder)
        next.cancel()
        _ = try? await next.value
    }

    @Test func theChannelIsNamedByTheApplicationAndTheEnvironment() throws {
        let folder = try runtimeFolder()
        let names = Set([("com.example.A", "env-1"), ("com.example.A", "env-2"), ("com.example.B", "env-1"), ("", "env-1")].map {
            RedirectChannel.name(applicationId: $0.0, environmentId: $0.1)
        })
        #expect(names.count == 4 && names.allSatisfy { $0.count == 16 })
        let long = try RedirectChannel(applicationId: String(repeating: "a.", count: 120) + "b",
                                       environmentId: String(repeating: "e", count: 500), runtimeDirectory: folder)
        #expect(long.socketPath.utf8.count <= RedirectChannel.maxSocketPath)
    }

    /// Answered on the receiver's own thread from the moment listening begins: a forward
    /// never waits for the task that runs the listener (which a busy cooperative pool may
    /// start late), and its URL is handled once that task runs.
    @Test func aForwardIsTakenBeforeTheListenerRuns() async throws {
        let emulator = try await Emulator.start()
        let folder = try runtimeFolder()
        let listener = try client(emulator).listenForRedirects(in: folder)
        let (url, _) = try await grantRedirect(emulator, environment: Env.open)
        #expect(try await client(emulator).forwardRedirect(url, timeout: Self.patience, in: folder) == .taken)
        let outcomes = Outcomes()
        let listening = Task { () async throws -> Void in try await listener.run(outcomes.add) }
        #expect(try await outcomes.next().get()?.authenticated != nil)
        listening.cancel()
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listening.value }
        await #expect(throws: PortalAuthSignInError.closed(reason: .cancelled)) { try await listener.run(outcomes.add) }
    }
}

/// What a listener's `run` reported, in order, with a wait for the next.
private final class Outcomes: Sendable {
    private struct State {
        var outcomes: [Result<AuthResult?, any Error>] = []
        var taken = 0
        var waiter: CheckedContinuation<Result<AuthResult?, any Error>, Never>?
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.outcomes.count } }

    func add(_ outcome: Result<AuthResult?, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<AuthResult?, any Error>, Never>? in
            state.outcomes.append(outcome)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.taken += 1
            return waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// The next outcome not taken yet, once it has come.
    func next() async -> Result<AuthResult?, any Error> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<AuthResult?, any Error>? in
                guard state.taken < state.outcomes.count else {
                    state.waiter = continuation
                    return nil
                }
                state.taken += 1
                return state.outcomes[state.taken - 1]
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A local client of a channel's socket that may misbehave; blocking, bounded by 30 s.
private enum ChannelPeer {
    static func connect(_ path: String) throws -> Int32 {
        guard case .connected(let fd) = try ChannelSocket.connect(to: path, timeout: .seconds(30)) else {
            throw LoopbackClient.Failure(description: "nobody listens on \(path)")
        }
        return fd
    }

    /// Sends `bytes` (as much as the receiver takes), then reads until it closes.
    static func exchange(_ path: String, _ bytes: [UInt8]) throws -> String? {
        let fd = try connect(path)
        defer { close(fd) }
        LoopbackClient.send(bytes, on: fd)
        return LoopbackClient.receiveAll(fd)
    }
}
