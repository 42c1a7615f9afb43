import CGlibcFloor
import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// A process the library started.
struct ChildProcess: Sendable {
    let pid: pid_t

    /// Starts `program` with `arguments` (argument 0 included) and the library's environment,
    /// standard input from `standardInput` (by default /dev/null), default signal handling, in
    /// a process group of its own (the host's terminal signals are not the browser's). It
    /// inherits standard output and error and no other descriptor: none of the library's
    /// (curl's connections and wake-up pair, the listener's sockets) and none of the host's.
    /// Nil when it could not start.
    static func spawn(_ program: String, arguments: [String], standardInput: Int32? = nil) -> ChildProcess? {
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
        // A browser that could not be kept from the rest is not started.
        let input = standardInput.map { posix_spawn_file_actions_adddup2(&actions, $0, STDIN_FILENO) }
            ?? posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        guard input == 0,
              pa_spawn_close_from(&actions, STDERR_FILENO + 1) == 0
        else { return nil }

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
