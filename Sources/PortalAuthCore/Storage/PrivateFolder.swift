#if canImport(Glibc)
import Glibc
#endif

/// A folder of the user's alone, where a store keeps what the user's other processes share
/// with it: the file store's entries and their lock files, the keyring store's lock files.
/// It must be a folder of this user's that no group or other mode bit opens (a symlink is
/// refused, not followed: `fileStoreUnsafe`); a missing one is made 0700, and so is any
/// missing parent (as XDG asks of its folders).
struct PrivateFolder: Sendable {
    let path: String
    /// What the folder holds, as messages name it.
    let role: Role

    enum Role: Sendable {
        /// The file store's folder: its entries, and a lock file beside each.
        case sessions
        /// The keyring store's lock files (`KeyringSessionStorage.lockFolder`).
        case keyringLocks
    }

    /// The folder, checked to be the user's alone; made when `creating`, else -1 when it
    /// does not exist.
    func open(creating: Bool) throws(SessionStorageError) -> Int32 {
        var fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 && errno == ENOENT {
            guard creating else { return -1 }
            try make()
            fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard fd >= 0 else {
            throw errno == ELOOP || errno == ENOTDIR ? unsafe("it is a symlink or not a folder") : failure("open the folder of")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = close(fd)
            throw failure("open the folder of")
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            _ = close(fd)
            throw unsafe(info.st_uid == geteuid() ? "others may enter it (its mode is not 0700)" : "it is another user's")
        }
        return fd
    }

    /// The lock file `name` in the folder (made 0600), locked (`flock`): the descriptor,
    /// whose close releases it. Another process's hold is waited for up to `milliseconds`,
    /// then the call fails: a holder that stopped, or that waits on a user, never hangs this
    /// one.
    func lock(_ name: String, waitingAtMost milliseconds: Int64) throws(SessionStorageError) -> Int32 {
        let folder = try open(creating: true)
        defer { _ = close(folder) }
        let fd = openat(folder, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("lock") }
        // flock waits without a bound: polled instead, the pause growing to 50 ms.
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        var pause: Int32 = 1
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let failed = failure("lock")
                _ = close(fd)
                throw failed
            }
            guard ContinuousClock.now < deadline else {
                _ = close(fd)
                throw busy
            }
            _ = poll(nil, 0, pause)
            pause = min(pause * 2, 50)
        }
        return fd
    }

    /// Makes the folder 0700, and any missing parent 0700 too.
    private func make() throws(SessionStorageError) {
        var partial = ""
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST { throw failure("create the folder of") }
        }
    }

    func unsafe(_ why: String) -> SessionStorageError {
        let message = switch role {
        case .sessions:
            "The session folder \(path) is refused: \(why). Make it a folder of this user's with mode 0700, or choose another."
        case .keyringLocks:
            "The folder of the keyring's lock files, \(path), is refused: \(why). Make it a folder of this user's with mode 0700; the stored session was left as it was."
        }
        return SessionStorageError(reason: .fileStoreUnsafe, message: message)
    }

    /// A failure of `action` (the system's error in `errno`).
    func failure(_ action: String) -> SessionStorageError {
        let cause = String(cString: strerror(errno))
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
