import CPosix
import Foundation
import PortalAuthCore

/// The programs the tests start (the emulator, Chromium, secret-tool, zbarimg, the demo, ...),
/// with posix_spawn and waitpid rather than Foundation's Process: its exit monitoring missed
/// quick children inside dbus-run-session, and LeakSanitizer found it leaking.
final class RunningProgram: Sendable {
    let pid: pid_t
    /// The read end of its standard output, when piped; else -1.
    let output: Int32
    /// The write end of its standard input while piped and open; else -1.
    private let input: Locked<Int32>
    /// Its wait status once reaped: from then on its pid may belong to another process.
    private let reaped = Locked<Int32?>(nil)

    enum Input {
        case null
        case pipe
    }

    private init(pid: pid_t, output: Int32, input: Int32) {
        self.pid = pid
        self.output = output
        self.input = Locked(input)
    }

    /// Starts `executable` with `arguments`, its environment `environment` (this process's
    /// when nil), standard error to /dev/null, standard input from /dev/null or a pipe, and
    /// standard output to a pipe or to /dev/null.
    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                      input: Input = .null, pipeOutput: Bool = true) throws -> RunningProgram {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        defer { (stdinPipe + stdoutPipe).filter { $0 >= 0 }.forEach { _ = close($0) } }
        // Close-on-exec from the start: a child another test spawns meanwhile must not inherit
        // these ends, or this child's output would not end when it does (dup2 clears the flag
        // on the child's own 0 and 1).
        if input == .pipe { guard pipe2(&stdinPipe, O_CLOEXEC) == 0 else { throw SubprocessError.notStarted } }
        if pipeOutput { guard pipe2(&stdoutPipe, O_CLOEXEC) == 0 else { throw SubprocessError.notStarted } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input == .pipe {
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if pipeOutput {
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for fd in stdinPipe + stdoutPipe where fd >= 0 { posix_spawn_file_actions_addclose(&actions, fd) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawn(&pid, executable, &actions, nil, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw SubprocessError.notStarted }
        // The ends the child uses are closed by the defer; ours are handed over.
        let child = RunningProgram(pid: pid, output: stdoutPipe[0], input: stdinPipe[1])
        stdoutPipe[0] = -1
        stdinPipe[1] = -1
        return child
    }

    deinit {
        if output >= 0 { close(output) }
        closeInput()
        if reaped.withLock({ $0 }) == nil {
            terminate()
            _ = wait()
        }
    }

    /// Writes `bytes` to its standard input (a pipe).
    func write(_ bytes: [UInt8]) {
        let fd = input.withLock { $0 }
        guard fd >= 0 else { return }
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// Closes its standard input: it reads end-of-file.
    func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Its standard output up to the first line feed (included), or all of it if none comes.
    func readLine() -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(output, &byte, 1) == 1 {
            line.append(byte)
            if byte == UInt8(ascii: "\n") { break }
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Everything left on its standard output, until it closes.
    func readToEnd() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(output, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return bytes
    }

    /// Sends SIGTERM unless it has been reaped (its pid may be another's by then).
    func terminate() {
        reaped.withLock { status in
            if status == nil { kill(pid, SIGTERM) }
        }
    }

    /// Waits for it to end and returns its wait status. It is reaped only under the lock
    /// `terminate` takes, so no signal can reach a process that reused its pid.
    @discardableResult
    func wait() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return status }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        return reaped.withLock { reaped in
            if let status = reaped { return status }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = status
            return status
        }
    }
}

/// Short-lived tools: run to the end, their standard output returned.
enum Subprocess {
    /// Runs a short-lived tool and returns its standard output; throws on a non-zero exit.
    /// (runReportingStatus, below, returns the status instead.)
    static func run(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                    environment: [String: String]? = nil) throws -> String {
        let (status, output) = try runReportingStatus(executable, arguments, input: input, environment: environment)
        guard status == 0 else { throw SubprocessError.status(status) }
        return output
    }

    static func runReportingStatus(_ executable: String, _ arguments: [String], input: [UInt8] = [],
                                   environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let child = try RunningProgram.spawn(executable, arguments, environment: environment, input: .pipe)
        child.write(input)
        child.closeInput()
        let output = child.readToEnd()
        return (child.wait(), String(decoding: output, as: UTF8.self))
    }
}

enum SubprocessError: Error {
    case notStarted
    case status(Int32)
}
