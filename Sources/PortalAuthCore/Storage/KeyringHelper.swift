import CPosix
import CProcess
#if canImport(Glibc)
import Glibc
#endif

/// The keyring of a forked child whose GLib is its parent's (docs/desktop.md "fork()"). GLib's
/// D-Bus connections all go through one thread of GLib's own, which a child does not have:
/// libsecret there waits for ever, on a new connection too. So such a child keeps its
/// sessions through a helper, the library itself run as a program (`Sources/CProgramEntry/
/// entry.c`), a process with a GLib of its own, which runs the very same keyring code and
/// answers over a socket pair. One per process, started by its first keyring call, ended by
/// the end of that process (its socket closes).
///
/// A child counts as such once GLib's GIO was loaded in it before its first keyring call
/// there (`ProcessFork.inheritsGIO`): by the parent (the library's keyring, or the host's own
/// D-Bus), or since.
enum KeyringHelper {
    /// What the helper is asked.
    enum Operation: UInt8 {
        case get, set, delete
        /// Whether a session could be stored now (`StorageReadiness`).
        case check
    }

    /// Runs `operation` in this process's helper: the stored text for `get`, else nil.
    /// A dialog is waited for there as `prompts` allow; the wait is not cancellable.
    static func perform(_ operation: Operation, _ owner: KeyringOwner, _ environmentId: String,
                        value: String? = nil, prompts: KeyringPrompts) throws -> String? {
        try connection.value.exchange(Request(operation: operation, owner: owner, environmentId: environmentId, value: value,
                                              promptMilliseconds: prompts.timeoutMilliseconds))
    }

    private static let connection = PerProcess { Connection() }

    /// The request and the reply as bytes: fields of a length (4 bytes, little-endian) and
    /// UTF-8.
    struct Request {
        let operation: Operation
        let owner: KeyringOwner
        let environmentId: String
        let value: String?
        /// `KeyringPrompts.timeoutMilliseconds`.
        let promptMilliseconds: Int64

        var prompts: KeyringPrompts { promptMilliseconds > 0 ? .allowed(timeout: .milliseconds(promptMilliseconds)) : .never }

        var bytes: [UInt8] {
            [operation.rawValue] + Frame.field(owner.applicationId) + Frame.field(owner.labelName)
                + Frame.field(environmentId) + Frame.field(value ?? "") + Frame.field(String(promptMilliseconds))
        }

        init(operation: Operation, owner: KeyringOwner, environmentId: String, value: String?, promptMilliseconds: Int64) {
            (self.operation, self.owner, self.environmentId, self.value) = (operation, owner, environmentId, value)
            self.promptMilliseconds = promptMilliseconds
        }

        init?(_ bytes: [UInt8]) {
            var reader = Frame.Reader(bytes)
            guard let raw = reader.byte(), let operation = Operation(rawValue: raw),
                  let applicationId = reader.text(), let labelName = reader.text(),
                  let environmentId = reader.text(), let value = reader.text(),
                  let prompt = reader.text().flatMap({ Int64($0) }), reader.atEnd
            else { return nil }
            self.init(operation: operation, owner: KeyringOwner(applicationId: applicationId, labelName: labelName),
                      environmentId: environmentId, value: operation == .set ? value : nil, promptMilliseconds: prompt)
        }
    }

    /// A reply: the text (or none), or the failure the keyring code threw.
    static func reply(_ outcome: Result<String?, SessionStorageError>) -> [UInt8] {
        switch outcome {
        case .success(let text?): return [0] + Frame.field(text)
        case .success(nil): return [1]
        case .failure(let error):
            let reason = StorageFailureReason.allCases.firstIndex(of: error.reason) ?? 0
            return [2, UInt8(reason)] + Frame.field(error.message)
        }
    }

    static func outcome(of reply: [UInt8]) -> Result<String?, SessionStorageError>? {
        var reader = Frame.Reader(reply)
        switch reader.byte() {
        case 0: return reader.text().map { .success($0) }
        case 1: return .success(nil)
        case 2:
            guard let index = reader.byte(), Int(index) < StorageFailureReason.allCases.count, let message = reader.text()
            else { return nil }
            return .failure(SessionStorageError(reason: StorageFailureReason.allCases[Int(index)], message: message))
        default: return nil
        }
    }

    // MARK: - This process's side

    /// The socket to this process's helper, started by the first exchange (and again after
    /// one ends), one exchange at a time.
    private final class Connection: Sendable {
        private struct State {
            var socket: Int32 = -1
        }

        private let state = Locked(State())

        /// How long the helper may take to answer (`KeyringPrompts.patienceMilliseconds`).
        private static func patience(_ request: Request) -> Int32 {
            Int32(clamping: request.prompts.patienceMilliseconds)
        }

        func exchange(_ request: Request) throws -> String? {
            try state.withLock { state in
                if state.socket < 0 { state.socket = try Self.start() }
                var message = request.bytes
                defer { Frame.wipe(&message) }
                guard Frame.write(message, to: state.socket), var reply = Frame.read(from: state.socket, waiting: Self.patience(request)) else {
                    _ = close(state.socket)
                    state.socket = -1
                    throw SessionStorageError(reason: .dbusFailure, message: "The keyring's helper process did not answer; try again.")
                }
                defer { Frame.wipe(&reply) }
                guard let outcome = KeyringHelper.outcome(of: reply) else {
                    throw SessionStorageError(reason: .dbusFailure, message: "The keyring's helper process answered nonsense; try again.")
                }
                return try outcome.get()
            }
        }

        /// Starts the helper on one end of a socket pair, its standard input: returns the other.
        private static func start() throws -> Int32 {
            guard let interpreter = pa_program_interpreter(), let library = pa_program_path() else {
                throw SessionStorageError(reason: .dbusFailure, message: "This process was forked from one that had used D-Bus, and the keyring cannot be reached from it here; make the client in a process started anew (exec, or multiprocessing's \"spawn\").")
            }
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw SessionStorageError(reason: .dbusFailure, message: "No socket for the keyring's helper process (errno \(errno)).")
            }
            let program = ChildProcess.spawn(String(cString: interpreter), arguments: [String(cString: interpreter), String(cString: library), argument],
                                             standardInput: ends[1])
            _ = close(ends[1])
            // Reaped once it ends, with the end of this process or of its socket.
            guard let program, program.watchExit() != nil else {
                _ = close(ends[0])
                throw SessionStorageError(reason: .dbusFailure, message: "The keyring's helper process could not start.")
            }
            return ends[0]
        }
    }

    /// What the program is run with to be the helper.
    static let argument = "--portal-auth-keyring-helper"

    // MARK: - The helper's side

    /// Answers requests on `fd` until it closes.
    static func serve(_ fd: Int32) {
        while var message = Frame.read(from: fd, waiting: -1) {
            defer { Frame.wipe(&message) }
            let outcome: Result<String?, SessionStorageError>
            do {
                guard let request = Request(message) else { throw SessionStorageError(reason: .dbusFailure, message: "The keyring's helper process was asked nonsense.") }
                outcome = .success(try Keyring.performHere(request.operation, request.owner, request.environmentId, value: request.value,
                                                            prompts: request.prompts))
            } catch let error as SessionStorageError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(SessionStorageError(reason: .dbusFailure, message: "The keyring could not be reached; try again."))
            }
            var answer = reply(outcome)
            defer { Frame.wipe(&answer) }
            guard Frame.write(answer, to: fd) else { return }
        }
    }
}
