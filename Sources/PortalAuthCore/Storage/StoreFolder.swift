#if canImport(Glibc)
import Glibc
#endif

/// A folder of the user's alone (`PrivateFolder`'s rule, its parents included) where a store
/// keeps what the user's other processes share with it: the file store's entries and their
/// lock files, the keyring store's lock files. Its faults as the store's errors, which name
/// what the folder holds.
struct StoreFolder: Sendable {
    let path: String
    /// What the folder holds, as messages name it.
    let role: Role

    enum Role: Sendable {
        /// The file store's folder: its entries, and a lock file beside each.
        case sessions
        /// The keyring store's lock files (`KeyringSessionStorage.lockFolder`).
        case keyringLocks
    }

    /// The folder, checked; made (0700, its parents as needed) when `creating`, else -1 when
    /// it does not exist.
    func open(creating: Bool) throws(SessionStorageError) -> Int32 {
        do {
            return try PrivateFolder(path: path).open(creating: creating) ?? -1
        } catch {
            throw storeError(error)
        }
    }

    /// The folder made or found safe, and writable: what a write needs but the write itself.
    func checkWritable() throws(SessionStorageError) {
        let folder = try open(creating: true)
        defer { _ = close(folder) }
        guard faccessat(folder, ".", W_OK, AT_EACCESS) == 0 else { throw failure("write") }
    }

    /// The lock file `name` in the folder, locked (`PrivateFolder.lock`): the descriptor,
    /// whose close releases it. `whileOpen` is given the folder once the lock is held.
    func lock(_ name: String, waitingAtMost milliseconds: Int64,
              whileOpen: (Int32) -> Void = { _ in }) throws(SessionStorageError) -> Int32 {
        let folder = try open(creating: true)
        defer { _ = close(folder) }
        do {
            let fd = try PrivateFolder.lock(name, in: folder, waitingAtMost: milliseconds)
            whileOpen(folder)
            return fd
        } catch {
            throw storeError(error)
        }
    }

    private func storeError(_ fault: PrivateFolder.Fault) -> SessionStorageError {
        switch fault {
        case .folderRefused(let why):
            return unsafe(why)
        case .parentRefused(let why):
            return unsafe(why, remedy: "Choose a folder whose parents only this user or root can change: each owned by one of them and not writable by others, or sticky like /tmp")
        case .failed(let action, let code):
            return failure(action, code: code)
        case .busy:
            return busy
        }
    }

    func unsafe(_ why: String, remedy: String = "Make it a folder of this user's with mode 0700, or choose another") -> SessionStorageError {
        let message = switch role {
        case .sessions:
            "The session folder \(path) is refused: \(why). \(remedy)."
        case .keyringLocks:
            "The folder of the keyring's lock files, \(path), is refused: \(why). \(remedy); the stored session was left as it was."
        }
        return SessionStorageError(reason: .fileStoreUnsafe, message: message)
    }

    /// A failure of `action` (the system's error `code`).
    func failure(_ action: String, code: Int32 = errno) -> SessionStorageError {
        let cause = String(cString: strerror(code))
        return switch role {
        case .sessions:
            SessionStorageError(reason: .fileStoreFailed,
                                message: "The file store could not \(action) the session (\(cause)); the stored session was left as it was.")
        case .keyringLocks:
            SessionStorageError(reason: .fileStoreFailed,
                                message: "The keyring's lock file in \(path) could not be taken (\(cause)); the stored session was left as it was.")
        }
    }

    /// Another process held the lock past the wait.
    private var busy: SessionStorageError {
        switch role {
        case .sessions:
            SessionStorageError(reason: .fileStoreFailed,
                                message: "Another process held the session file's lock too long; the stored session was left as it was; try again.")
        case .keyringLocks:
            SessionStorageError(reason: .dbusFailure,
                                message: "Another process of this app held the keyring's lock too long (it may wait on a keyring dialog); the stored session was left as it was; try again.")
        }
    }
}
