#if canImport(Glibc)
import Glibc
#endif

/// Sessions in plain files, for machines with no keyring (a script over SSH, a server, a
/// container): chosen by the application, never instead of the keyring on its own. One file
/// per application and environment, `<application id or "shared">@<environment>.json`, in a
/// folder that must be the user's alone (`$XDG_STATE_HOME/portal-auth`, else
/// `~/.local/state/portal-auth`, created with mode 0700, or a folder the application names).
/// The file is not encrypted: whoever can read it as the user holds the session.
///
/// - A folder that is a symlink, another user's, or open to others (any group or other mode
///   bit) is refused (`fileStoreUnsafe`), and so is an entry that is not a regular file of
///   the user's, and a folder with a parent another user could rename or replace
///   (`PrivateFolder` has the rule).
/// - A write goes to a temporary file in the folder (mode 0600), is flushed to disk, renamed
///   over the entry, and the folder flushed: a crash leaves the old entry or the new one,
///   never a part of one. The temporary file a killed write leaves holds a session the server
///   issued: it is never read, and the next operation of the vault (restore, write, sign-out,
///   invalidation) removes it, under the entry's lock.
/// - Before a grant is spent, the folder is made or checked, and must be writable.
/// - Each environment's entry has a lock file beside it: the vault holds it (`flock`) around
///   each of its operations, so that compare-and-delete is atomic across processes too.
public final class FileSessionStorage: SessionStorage, EntryLocking, StorageReadiness {
    /// The folder the files are in.
    public let directory: String
    fileprivate let applicationId: String?
    private let thread = StoreThread(name: "portal-auth-file")

    /// - Parameters:
    ///   - applicationId: the application's reverse-DNS name (`ApplicationId`'s
    ///     rule), or nil: inside a Flatpak sandbox its `FLATPAK_ID`, elsewhere the entry of
    ///     every program of the environment that names none.
    ///   - directory: the folder; nil for `$XDG_STATE_HOME/portal-auth` (default
    ///     `~/.local/state/portal-auth`). It is checked, and made, on first use.
    /// - Throws: `invalidArgument` for an application id that is not a reverse-DNS name, or a
    ///   folder that is empty, relative or holds a NUL.
    public init(applicationId: String? = nil, directory: String? = nil) throws(PortalAuthError) {
        self.applicationId = try ApplicationId.resolved(applicationId)
        self.directory = try Self.folder(directory)
    }

    /// The folder `directory` names; nil for the default one.
    /// - Throws: `invalidArgument` for one that is empty, relative or holds a NUL.
    static func folder(_ directory: String?) throws(PortalAuthError) -> String {
        let folder = directory ?? defaultDirectory
        guard folder.hasPrefix("/"), !folder.utf8.contains(0) else { throw .invalidArgument(name: "directory") }
        return folder
    }

    /// `$XDG_STATE_HOME/portal-auth`, else `$HOME/.local/state/portal-auth` (the XDG Base
    /// Directory default); the passwd entry's home when HOME is unset.
    static var defaultDirectory: String {
        if let state = environment("XDG_STATE_HOME"), state.hasPrefix("/") { return state + "/portal-auth" }
        let home = environment("HOME") ?? getpwuid(geteuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } } ?? "/"
        return home + "/.local/state/portal-auth"
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    public func get(environmentId: String) async throws -> String? {
        try await thread.run { [self] in try FileEntry(self, environmentId).read() }
    }

    public func set(_ value: String, environmentId: String) async throws {
        try await thread.run { [self] in try FileEntry(self, environmentId).write(value) }
    }

    public func delete(environmentId: String) async throws {
        try await thread.run { [self] in try FileEntry(self, environmentId).remove() }
    }

    func checkCanStore(environmentId: String) async throws {
        try await thread.run { [self] in try FileEntry(self, environmentId).checkCanWrite() }
    }

    func withEntryLock<T: Sendable>(environmentId: String, _ body: () async throws -> T) async throws -> T {
        let lock = try await thread.run { [self] in try FileEntry(self, environmentId).lock() }
        defer { _ = close(lock) }
        return try await body()
    }

    /// The entry's file name: `<application id>@<environment id>.json`, "shared" for no
    /// application id (a reverse-DNS name starts with a letter and holds no `@` or `/`), each
    /// byte of the environment id that is not a letter, digit, `-` or `_` as `%XX` (so the
    /// name holds no `/`, and two environments never share one).
    static func fileName(applicationId: String?, environmentId: String) -> String {
        "\(applicationId ?? "shared")@\(escaped(environmentId)).json"
    }

    /// The lock file of the entry `fileName`, beside it.
    static func lockFileName(_ fileName: String) -> String {
        "." + fileName + ".lock"
    }

    /// How long another process's operation on an entry is waited for.
    static let lockPatience: Int64 = 60_000

    private static func escaped(_ text: String) -> String {
        var name = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                name += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return name
    }
}

/// A store whose entries a process can lock against other processes; the vault holds the
/// lock of an environment's entry around each of its operations.
protocol EntryLocking: SessionStorage {
    func withEntryLock<T: Sendable>(environmentId: String, _ body: () async throws -> T) async throws -> T
}

/// One environment's entry, on the store's thread.
private struct FileEntry {
    let storeFolder: StoreFolder
    let name: String

    /// The longest entry read: far beyond a session's JSON.
    static let maxLength = 1 << 20

    init(_ store: FileSessionStorage, _ environmentId: String) {
        storeFolder = StoreFolder(path: store.directory, role: .sessions)
        name = FileSessionStorage.fileName(applicationId: store.applicationId, environmentId: environmentId)
    }

    func read() throws(SessionStorageError) -> String? {
        let folder = try storeFolder.open(creating: false)
        guard folder >= 0 else { return nil }
        defer { _ = close(folder) }
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw errno == ELOOP ? storeFolder.unsafe("the session file is a symlink") : storeFolder.failure("read")
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw storeFolder.failure("read") }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            throw storeFolder.unsafe("the session file is not a file of this user's")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        defer { FileEntry.wipe(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { FileEntry.wipe(&bytes); throw storeFolder.failure("read") }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= Self.maxLength else { FileEntry.wipe(&bytes); throw storeFolder.failure("read") }
        }
        defer { FileEntry.wipe(&bytes) }
        return StoredSession.entry(utf8: bytes)
    }

    func write(_ text: String) throws(SessionStorageError) {
        let folder = try storeFolder.open(creating: true)
        defer { _ = close(folder) }
        _ = removeTemporary(in: folder)
        let fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw storeFolder.failure("write") }
        var bytes = Array(text.utf8)
        defer { FileEntry.wipe(&bytes) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        let flushed = written == bytes.count && fsync(fd) == 0
        _ = close(fd)
        guard flushed, renameat(folder, temporary, folder, name) == 0 else {
            let code = errno
            _ = removeTemporary(in: folder)
            throw storeFolder.failure("write", code: code)
        }
        _ = fsync(folder)
    }

    /// Whether a write could be made now: the folder made or found safe, and writable.
    func checkCanWrite() throws(SessionStorageError) {
        try storeFolder.checkWritable()
    }

    func remove() throws(SessionStorageError) {
        let folder = try storeFolder.open(creating: false)
        guard folder >= 0 else { return }
        defer { _ = close(folder) }
        guard unlinkat(folder, name, 0) == 0 || errno == ENOENT else { throw storeFolder.failure("delete") }
        _ = fsync(folder)
        PortalAuthLog.emit(.debug, "File store: the session file \(name) was removed.")
    }

    /// The entry's lock file, locked (`StoreFolder.lock`): the descriptor, whose close
    /// releases it. Another process holds it only for a file's read, write or removal.
    func lock() throws(SessionStorageError) -> Int32 {
        try storeFolder.lock(FileSessionStorage.lockFileName(name), waitingAtMost: FileSessionStorage.lockPatience) { folder in
            // The vault holds this lock around every write, so a temporary file now is one a
            // killed write left: it may hold a session the server issued, which sign-out would
            // never remove.
            if removeTemporary(in: folder) {
                _ = fsync(folder)
                PortalAuthLog.emit(.info, "File store: a temporary file an interrupted write left (.\(name).tmp) was removed.")
            }
        }
    }

    private var temporary: String { "." + name + ".tmp" }

    /// Removes the temporary file of a write; whether there was one.
    private func removeTemporary(in folder: Int32) -> Bool {
        unlinkat(folder, temporary, 0) == 0
    }


    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let start = $0.baseAddress { explicit_bzero(start, $0.count) } }
    }
}
