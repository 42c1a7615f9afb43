import CPosix
#if canImport(Glibc)
import Glibc
#endif

/// Opens the file store's folder by walking its path from `/`, one component at a time:
/// each is opened with `O_NOFOLLOW` and checked with `fstat` on what was opened, so what is
/// checked is what is used. No folder above it may be renamed or replaced by another user:
///
/// - a parent must be owned by the user or root and not writable by group or others, or be
///   sticky (like `/tmp`), where the next component must then be the user's or root's;
/// - a symlink among the parents is followed only where a folder would pass (so no other
///   user can swap it), and its target is walked by the same rules; the folder itself must
///   not be a symlink;
/// - the folder itself must be the user's, with no group or other mode bit.
///
/// Missing components are made 0700 when `creating` (as XDG asks of its folders).
struct PrivateFolder {
    /// Why a folder is not used: refused (`why` says what was found), or a system call failed.
    enum Fault: Error {
        /// The folder itself is not the user's alone.
        case folderRefused(why: String)
        /// A folder above it could be renamed or replaced by another user.
        case parentRefused(why: String)
        /// `errno` says why; `action` is what could not be done.
        case failed(action: String, errno: Int32)
        /// Another process held a lock file past the wait (`lock`).
        case busy
    }

    /// What keeps a folder (its `stat`) from being the user's alone.
    enum Sharing {
        /// Another user owns it.
        case anotherUsers
        /// Its mode has a group or other bit.
        case openToOthers
    }

    /// The one rule of a folder that is the user's alone: the effective user's, with no
    /// group or other mode bit. Nil when it is.
    static func sharing(_ info: stat) -> Sharing? {
        guard info.st_uid == geteuid() else { return .anotherUsers }
        return info.st_mode & 0o077 == 0 ? nil : .openToOthers
    }

    /// How many symlinks a walk follows, as the kernel's own bound (`ELOOP`).
    static let maxLinks = 40

    let path: String

    /// The folder opened for reading (a descriptor to close), or nil when it does not exist
    /// and not `creating`.
    func open(creating: Bool) throws(Fault) -> Int32? {
        var walked = try Walked()
        defer { walked.closeAll() }
        var pending = Array(path.split(separator: "/", omittingEmptySubsequences: true).reversed())
        var links = 0
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." { walked.leave(); continue }
            switch try walked.enter(String(name), creating: creating, last: pending.isEmpty) {
            case nil: return nil
            case .folder?: continue
            case .link(let fd)?:
                // The folder itself is never a symlink; a parent may be, where it cannot be swapped.
                guard !pending.isEmpty else {
                    _ = close(fd)
                    throw .folderRefused(why: "it is a symlink")
                }
                links += 1
                let target = try Self.target(ofLink: fd)
                guard links <= Self.maxLinks else { throw .parentRefused(why: "its path has too many symlinks") }
                if target.hasPrefix("/") { walked.leaveAll() }
                pending += target.split(separator: "/", omittingEmptySubsequences: true).reversed()
            }
        }
        return try walked.openFolder()
    }

    /// The lock file `name` in the open folder `folder` (made 0600), locked (`flock`): the
    /// descriptor, whose close releases it. Another process's hold is waited for up to
    /// `milliseconds`, then `.busy`: a holder that stopped, or that waits on a user, never
    /// hangs this one.
    static func lock(_ name: String, in folder: Int32, waitingAtMost milliseconds: Int64) throws(Fault) -> Int32 {
        let fd = openat(folder, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failed(action: "lock", errno: errno) }
        // flock waits without a bound: polled instead, the pause growing to 50 ms.
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        var pause: Int32 = 1
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                _ = close(fd)
                throw .failed(action: "lock", errno: code)
            }
            guard ContinuousClock.now < deadline else {
                _ = close(fd)
                throw .busy
            }
            _ = poll(nil, 0, pause)
            pause = min(pause * 2, 50)
        }
        return fd
    }

    /// The folders walked so far, from `/`, each checked as a parent; their descriptors are
    /// `O_PATH` ones, which need no read permission.
    private struct Walked {
        private var folders: [(fd: Int32, path: String, info: stat)] = []

        init() throws(Fault) {
            let fd = Glibc.open("/", PA_O_PATH | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw .failed(action: "open the folder of", errno: errno) }
            try push(fd, path: "/", info: try Self.status(of: fd))
        }

        /// A component opened under the last folder: a folder, checked and entered, or a
        /// symlink (not entered); nil when it is missing and not `creating`. The `last` one is
        /// the store's folder, which `openFolder` checks by its own, stricter rule.
        mutating func enter(_ name: String, creating: Bool, last: Bool) throws(Fault) -> Step? {
            let (parent, parentPath, parentInfo) = folders[folders.count - 1]
            let path = (parentPath == "/" ? "" : parentPath) + "/" + name
            var fd = openat(parent, name, PA_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 && errno == ENOENT {
                guard creating else { return nil }
                guard mkdirat(parent, name, 0o700) == 0 || errno == EEXIST else {
                    throw .failed(action: "create the folder of", errno: errno)
                }
                fd = openat(parent, name, PA_O_PATH | O_NOFOLLOW | O_CLOEXEC)
            }
            guard fd >= 0 else { throw .failed(action: "open the folder of", errno: errno) }
            let info = try Self.status(of: fd)
            // In a sticky folder others may write to, only an entry's owner (or the folder's)
            // may rename it.
            if !last && parentInfo.st_mode & 0o022 != 0 && !isTrusted(info.st_uid) {
                _ = close(fd)
                throw .parentRefused(why: "\(path) is another user's, in \(parentPath), which others may write to")
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                return .link(fd)
            case S_IFDIR where last:
                folders.append((fd, path, info))
                return .folder
            case S_IFDIR:
                try push(fd, path: path, info: info)
                return .folder
            default:
                _ = close(fd)
                throw last ? .folderRefused(why: "it is not a folder") : .parentRefused(why: "\(path) is not a folder")
            }
        }

        /// The last folder, opened for reading, checked to be the user's alone.
        func openFolder() throws(Fault) -> Int32 {
            let fd = openat(folders[folders.count - 1].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw .failed(action: "open the folder of", errno: errno) }
            let info = try Self.status(of: fd)
            if let shared = PrivateFolder.sharing(info) {
                _ = close(fd)
                throw .folderRefused(why: shared == .openToOthers ? "others may enter it (its mode is not 0700)" : "it is another user's")
            }
            return fd
        }

        /// Back to the parent (`..`); `/` stays `/`.
        mutating func leave() {
            guard folders.count > 1, let last = folders.popLast() else { return }
            _ = close(last.fd)
        }

        /// Back to `/` (an absolute symlink).
        mutating func leaveAll() {
            while folders.count > 1 { leave() }
        }

        func closeAll() {
            for folder in folders { _ = close(folder.fd) }
        }

        /// Takes `fd` as the next folder, when no other user could rename or replace what is
        /// in it; closes it otherwise.
        private mutating func push(_ fd: Int32, path: String, info: stat) throws(Fault) {
            guard isTrusted(info.st_uid) else {
                _ = close(fd)
                throw .parentRefused(why: "\(path) is another user's")
            }
            guard info.st_mode & 0o022 == 0 || info.st_mode & S_ISVTX != 0 else {
                _ = close(fd)
                throw .parentRefused(why: "others may write to \(path), and it is not sticky")
            }
            folders.append((fd, path, info))
        }

        /// `fd`'s `fstat`; `fd` is closed when that fails.
        private static func status(of fd: Int32) throws(Fault) -> stat {
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let code = errno
                _ = close(fd)
                throw .failed(action: "open the folder of", errno: code)
            }
            return info
        }

        /// The user's or root's: what no other user can change. Inside a user namespace that
        /// maps only the user (Flatpak), root's folders (`/`, `/home`, `/tmp`) read as the
        /// overflow uid's, as every other user's do: they are taken as root's, since no
        /// folder above the user's home could be used otherwise.
        private func isTrusted(_ owner: uid_t) -> Bool {
            // /proc is read only for an owner that is neither: rare outside a namespace.
            owner == geteuid() || owner == 0 || UserNamespace.current().mayBeRoot(owner)
        }
    }

    /// What a component was.
    private enum Step {
        /// A folder, entered.
        case folder
        /// A symlink: an `O_PATH` descriptor of the link itself.
        case link(Int32)
    }

    /// The target of the link `fd` (an `O_PATH` descriptor of it), which it closes.
    private static func target(ofLink fd: Int32) throws(Fault) -> String {
        defer { _ = close(fd) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { bytes in
            bytes.baseAddress.map { readlinkat(fd, "", $0, bytes.count) } ?? -1
        }
        guard count >= 0 else { throw .failed(action: "open the folder of", errno: errno) }
        guard count < buffer.count else { throw .failed(action: "open the folder of", errno: ENAMETOOLONG) }
        guard let target = String(validating: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) else {
            throw .failed(action: "open the folder of", errno: EILSEQ)
        }
        return target
    }
}
