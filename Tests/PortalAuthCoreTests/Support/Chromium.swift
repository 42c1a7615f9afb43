import Foundation
import Synchronization
@testable import PortalAuthCore

/// A real headless Chromium (Debian's `chromium`) as the browser opener: it loads the
/// authorize URL, follows the provider's redirect to the loopback listener exactly as a
/// user's browser would, prints the DOM of the page it ends on (`--dump-dom`) and exits.
///
/// Each browser runs as the first process of a PID namespace of its own (`unshare`): when it
/// ends, or is killed by `stop()`, the kernel ends and reaps every process it started, so
/// none outlives the test (this machine's PID 1 does not reap orphans). Its profile and
/// HOME are a temporary folder, removed by `stop()`. Started with posix_spawn and reaped
/// with waitpid: Foundation's Process leaks under LeakSanitizer when it waits.
final class Chromium: Sendable {
    static let launcher = "/usr/bin/chromium"

    private struct Launch: Sendable {
        let pid: pid_t
        /// The read end of its standard output.
        let output: Int32
        let arguments: [String]
    }

    private struct State {
        var launches: [Launch] = []
        /// The launches whose process was waited for (reaped: its pid may be reused).
        var reaped: Set<pid_t> = []
    }

    private let state = Mutex(State())
    private let profile: URL

    init() throws {
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
    }

    /// Opens each URL in a new headless browser; `ephemeral` asks for an incognito window.
    var opener: BrowserOpener {
        { [self] url, ephemeral in try launch(url, incognito: ephemeral) }
    }

    /// Opens `url` in a new headless browser with `flags` besides the usual ones (such as
    /// `--host-resolver-rules=...`), as a user's browser visiting that page.
    func launch(_ url: String, incognito: Bool = false, flags extra: [String] = []) throws {
        let flags = [
            "--headless=new",
            "--no-sandbox",            // running as root, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--user-data-dir=\(profile.path)/profile",
            "--no-proxy-server",
        ] + (incognito ? ["--incognito"] : []) + extra + ["--dump-dom", url]
        var arguments = ["--pid", "--fork", "--kill-child", "--mount-proc"]
        if geteuid() != 0 { arguments = ["--map-root-user"] + arguments }
        let (pid, output) = try Self.spawn("/usr/bin/unshare", ["unshare"] + arguments + [Self.launcher] + flags,
                                           environment: ["HOME=\(profile.path)", "PATH=/usr/bin:/bin"])
        state.withLock { $0.launches.append(Launch(pid: pid, output: output, arguments: flags)) }
    }

    /// `argv` run as `program` with `environment`, standard input and error on /dev/null;
    /// its pid and the read end of its standard output.
    private static func spawn(_ program: String, _ argv: [String], environment: [String]) throws -> (pid_t, Int32) {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw LoopbackClient.Failure(description: "pipe: errno \(errno)") }
        // Close-on-exec at once, so that no other test's child holds the write end open.
        pipeEnds.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArguments + cEnvironment).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, cArguments, cEnvironment)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw LoopbackClient.Failure(description: "\(program) did not start (error \(spawned))")
        }
        return (pid, pipeEnds[0])
    }

    /// The flags of each browser started, in order.
    var launchedFlags: [[String]] { state.withLock { $0.launches.map(\.arguments) } }

    /// Waits for the first browser (or the one `index` says) to exit and returns the DOM it printed.
    func page(_ index: Int = 0) throws -> String {
        guard let launch = state.withLock({ $0.launches.indices.contains(index) ? $0.launches[index] : nil }) else {
            throw LoopbackClient.Failure(description: "no browser launched")
        }
        // A browser whose page never loads would keep its output open: end it after a minute.
        let hangGuard = DispatchWorkItem { [self] in end(launch, signal: SIGTERM) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: hangGuard)
        defer { hangGuard.cancel() }
        var printed: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(launch.output, &buffer, buffer.count)
            if count > 0 {
                printed += buffer[..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        end(launch, signal: nil)
        return String(decoding: printed, as: UTF8.self)
    }

    /// Ends every browser still running, waits for each, and removes the profile.
    func stop() {
        for launch in state.withLock({ $0.launches }) { end(launch, signal: SIGTERM) }
        state.withLock { $0.launches }.forEach { close($0.output) }
        try? FileManager.default.removeItem(at: profile)
    }

    /// Sends `signal` (if any) to the browser unless it was reaped already, then waits for
    /// it, once.
    private func end(_ launch: Launch, signal: Int32?) {
        let waits = state.withLock { state -> Bool in
            guard !state.reaped.contains(launch.pid) else { return false }
            if let signal { kill(launch.pid, signal) }
            state.reaped.insert(launch.pid)
            return true
        }
        guard waits else { return }
        var status: Int32 = 0
        while waitpid(launch.pid, &status, 0) < 0 && errno == EINTR {}
    }
}
