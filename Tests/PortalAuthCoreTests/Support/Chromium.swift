import Foundation
@testable import PortalAuthCore

/// A real headless Chromium (Debian's `chromium`) as the browser opener: it loads the
/// authorize URL, follows the provider's redirect to the loopback listener exactly as a
/// user's browser would, prints the DOM of the page it ends on (`--dump-dom`) and exits.
///
/// Each browser runs as the first process of a PID namespace of its own (`unshare`): when it
/// ends, or is killed by `stop()`, the kernel ends and reaps every process it started, so
/// none outlives the test (this machine's PID 1 does not reap orphans). Its profile and
/// HOME are a temporary folder, removed by `stop()`. Started with posix_spawn and reaped
/// with waitpid (`RunningProgram`): Foundation's Process leaks under LeakSanitizer when it waits.
final class Chromium: Sendable {
    static let launcher = "/usr/bin/chromium"

    private struct Launch: Sendable {
        let process: RunningProgram
        let arguments: [String]
    }

    private let launches = Locked<[Launch]>([])
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
        let process = try RunningProgram.spawn("/usr/bin/unshare", arguments + [Self.launcher] + flags,
                                               environment: ["HOME": profile.path, "PATH": "/usr/bin:/bin"])
        launches.withLock { $0.append(Launch(process: process, arguments: flags)) }
    }

    /// The flags of each browser started, in order.
    var launchedFlags: [[String]] { launches.withLock { $0.map(\.arguments) } }

    /// Waits for the first browser (or the one `index` says) to exit and returns the DOM it printed.
    func page(_ index: Int = 0) throws -> String {
        guard let launch = launches.withLock({ $0.indices.contains(index) ? $0[index] : nil }) else {
            throw LoopbackClient.Failure(description: "no browser launched")
        }
        // A browser whose page never loads would keep the pipe open: end it after a minute.
        let hangGuard = DispatchWorkItem { launch.process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: hangGuard)
        defer { hangGuard.cancel() }
        let page = launch.process.readToEnd()
        launch.process.wait()
        return String(decoding: page, as: UTF8.self)
    }

    /// Ends every browser still running, waits for each, and removes the profile.
    func stop() {
        for launch in launches.withLock({ $0 }) {
            launch.process.terminate()
            launch.process.wait()
        }
        try? FileManager.default.removeItem(at: profile)
    }
}
