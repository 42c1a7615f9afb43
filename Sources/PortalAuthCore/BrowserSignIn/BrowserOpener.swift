#if canImport(Glibc)
import Glibc
#endif

/// Opens an authorize URL for the user; installed with `PortalAuth.setBrowserOpener`.
///
/// `ephemeral` is the client's `prefersEphemeralWebBrowserSession`: a host that can open a
/// private window may honour it. The opener runs on a library thread once per browser
/// sign-in, after the loopback listener is already answering, and should return once the
/// browser is launched. Throwing ends the sign-in as `PortalAuthSignInError.unavailable`
/// (`.openerFailed`); throw a `BrowserOpenerError` to say why.
public typealias BrowserOpener = @Sendable (_ url: String, _ ephemeral: Bool) throws -> Void

/// The default opener: each command of `$BROWSER` in turn (a `:`-separated list; `%s` in a
/// command stands for the URL, `%%` for `%`, and without `%s` the URL is the last argument),
/// then `xdg-open`. Each is spawned, never through a shell. One that ends with a failure
/// within a short grace (xdg-open with no browser configured, no display) gives way to the
/// next; one still running then is taken as the launched browser (a browser may run for
/// hours) and reaped by a thread of its own when it exits. There is no generic private
/// window: `ephemeral` is not used.
struct SystemBrowser: Sendable {
    /// `$BROWSER`, or nil.
    let browser: String?
    /// `$PATH`, searched for programs named without a `/`.
    let path: String?

    /// As the process environment says now.
    static var current: SystemBrowser {
        SystemBrowser(browser: getenv("BROWSER").map { String(cString: $0) },
                      path: getenv("PATH").map { String(cString: $0) })
    }

    /// `detail`: how the last command that started ended, or nil when none could start.
    struct NoBrowser: Error {
        let detail: String?
    }

    /// How long a command may take to fail before it counts as the launched browser.
    static let failureGrace = Duration.seconds(2)

    func open(_ url: String, ephemeral: Bool) throws(NoBrowser) {
        var lastFailure: String?
        for command in commands(for: url) {
            guard let program = resolve(command[0]) else { continue }
            guard let process = ChildProcess.spawn(program, arguments: command) else { continue }
            if let status = process.watchExit()?.status(within: Self.failureGrace), status != 0 {
                lastFailure = "\(program) failed (wait status \(status))"
                PortalAuthLog.emit(.warning, "Browser sign-in: \(lastFailure ?? program).")
                continue
            }
            PortalAuthLog.emit(.info, "Browser sign-in: opened the browser with \(program).")
            return
        }
        PortalAuthLog.emit(.warning, "Browser sign-in: no browser could be started; set $BROWSER or install xdg-utils (xdg-open).")
        throw NoBrowser(detail: lastFailure)
    }

    /// The argument vectors to try, in order, with the URL in place.
    func commands(for url: String) -> [[String]] {
        var commands: [[String]] = []
        for entry in (browser ?? "").split(separator: ":") {
            let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard !words.isEmpty else { continue }
            var placed = false
            let arguments = words.map { Self.substitute(url, into: $0, placed: &placed) }
            commands.append(placed ? arguments : arguments + [url])
        }
        commands.append(["xdg-open", url])
        return commands
    }

    /// `word` with `%s` replaced by `url` (setting `placed`) and `%%` by `%`; the URL itself
    /// is never rescanned.
    private static func substitute(_ url: String, into word: Substring, placed: inout Bool) -> String {
        var result = ""
        var index = word.startIndex
        while index < word.endIndex {
            let next = word.index(after: index)
            if word[index] == "%", next < word.endIndex, word[next] == "s" || word[next] == "%" {
                if word[next] == "s" {
                    result += url
                    placed = true
                } else {
                    result += "%"
                }
                index = word.index(after: next)
            } else {
                result.append(word[index])
                index = next
            }
        }
        return result
    }

    /// The executable `program` names: itself when it has a `/`, else the first match in PATH.
    private func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// A process the library started.
struct ChildProcess: Sendable {
    let pid: pid_t

    /// Starts `program` with `arguments` (argument 0 included) and the library's environment,
    /// standard input from /dev/null, default signal handling, in a process group of its own
    /// (the host's terminal signals are not the browser's). Nil when it could not start.
    static func spawn(_ program: String, arguments: [String]) -> ChildProcess? {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, program, &actions, &attributes, argv, environ)
        return status == 0 ? ChildProcess(pid: pid) : nil
    }

    /// Collects the exit status on a small thread of its own once the process ends, so no
    /// zombie is left behind; the returned watch tells whether it ended, and how. Nil (with a
    /// warning) when no thread could be started.
    func watchExit() -> ExitWatch? {
        let watch = ExitWatch()
        let started = DetachedThread.start(name: "portal-auth-reap", stackSize: 64 << 10) { watch.record(self.wait()) }
        guard started == 0 else {
            PortalAuthLog.emit(.warning, "Browser sign-in: no thread to reap the browser process \(pid) (error \(started)).")
            return nil
        }
        return watch
    }

    /// Waits for the process to end and returns its wait status.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// The wait status of a child process, once its reaper has collected it.
final class ExitWatch: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ended = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var status: Int32?

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(ended, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(ended)
        pthread_mutex_destroy(mutex)
        ended.deallocate()
        mutex.deallocate()
    }

    func record(_ waitStatus: Int32) {
        pthread_mutex_lock(mutex)
        status = waitStatus
        pthread_cond_broadcast(ended)
        pthread_mutex_unlock(mutex)
    }

    /// The wait status if the process ends within `grace`, else nil.
    func status(within grace: Duration) -> Int32? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = grace.components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while status == nil {
            if pthread_cond_timedwait(ended, mutex, &deadline) == ETIMEDOUT { break }
        }
        return status
    }
}
