import Foundation

/// Runs a program as a second local user (`nobody`), through `setpriv`: as root directly,
/// otherwise through `sudo -n`. The tests of the rules that keep one user's sign-in from
/// another user on the same machine use it: a process of another uid, for real.
enum AnotherUser {
    static let uid: uid_t = 65534

    /// Runs `program` with `arguments` as the other user; its exit status and standard output.
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try Subprocess.runReportingStatus("/usr/bin/env", command(program, arguments))
    }

    /// Starts `program` with `arguments` as the other user, its standard input and output piped.
    static func start(_ program: String, _ arguments: [String]) throws -> RunningProgram {
        try RunningProgram.spawn("/usr/bin/env", command(program, arguments), input: .pipe)
    }

    private static func command(_ program: String, _ arguments: [String]) -> [String] {
        let setpriv = ["setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", program] + arguments
        return getuid() == 0 ? setpriv : ["sudo", "-n"] + setpriv
    }
}
