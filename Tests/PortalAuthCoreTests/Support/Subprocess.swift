import Foundation

/// Short-lived tools the tests run (secret-tool, zbarimg, rsvg-convert, the demo): posix_spawn
/// and waitpid rather than Foundation's Process, whose exit monitoring missed such quick
/// children inside dbus-run-session. Standard error goes to /dev/null.
enum Subprocess {
    /// Runs a short-lived tool and returns its standard output; throws on a non-zero exit.
    /// (runReportingStatus, below, returns the status instead.)
    static func run(_ executable: String, _ arguments: [String], input: [UInt8] = []) throws -> String {
        let (status, output) = try runReportingStatus(executable, arguments, input: input)
        guard status == 0 else { throw SubprocessError.status(status) }
        return output
    }

    static func runReportingStatus(_ executable: String, _ arguments: [String],
                                   input: [UInt8] = []) throws -> (status: Int32, output: String) {
        var stdinPipe: [Int32] = [0, 0]
        var stdoutPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0 else { throw SubprocessError.notStarted }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for fd in stdinPipe + stdoutPipe { posix_spawn_file_actions_addclose(&actions, fd) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        guard spawned == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            throw SubprocessError.notStarted
        }
        _ = input.withUnsafeBytes { write(stdinPipe[1], $0.baseAddress, $0.count) }
        close(stdinPipe[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(stdoutPipe[0], &buffer, buffer.count)
            if count <= 0 { break }
            output += buffer[..<count]
        }
        close(stdoutPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status, String(decoding: output, as: UTF8.self))
    }
}

enum SubprocessError: Error {
    case notStarted
    case status(Int32)
}
