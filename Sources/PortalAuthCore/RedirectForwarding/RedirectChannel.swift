#if canImport(Glibc)
import Glibc
#endif

/// Where the running instance of an application listens for the redirects that its next
/// instances forward (docs/desktop.md "Redirect forwarding"): a Unix socket in the user's
/// runtime folder, one per application id and environment.
///
/// Why a Unix socket in `$XDG_RUNTIME_DIR` rather than a name on the session D-Bus: the
/// kernel checks who may reach it (the folder is the user's own, mode 0700, and each end
/// reads the other's user id, `SO_PEERCRED`), it needs nothing the library does not load
/// already (D-Bus would open GLib and a connection to the bus for every forward), it works
/// where no session bus runs, and every limit on what a client may send, and how long it
/// may take, is the library's own rather than the bus daemon's. A `.desktop` handler always
/// runs in the user's session, where the runtime folder exists.
///
/// The files: `$XDG_RUNTIME_DIR/portal-auth/<name>.sock`, and `<name>.lock`, which the
/// listening instance holds locked (`flock`) so that a second one is refused and a socket
/// left by one that crashed is replaced. The name is a hash of the application id and the
/// environment id, since a socket's path holds at most 107 bytes.
struct RedirectChannel: Equatable, Sendable {
    /// The socket's path.
    let socketPath: String
    /// The lock file's path.
    let lockPath: String

    /// The folder under `$XDG_RUNTIME_DIR` that holds the channels.
    static let folderName = "portal-auth"

    /// The longest path a Unix socket address holds (`sun_path`, less its terminating NUL).
    static let maxSocketPath = 107

    /// The channel of `applicationId` (nil: none) and `environmentId` in `runtimeDirectory`,
    /// its folder checked (and made when missing).
    /// - Throws: `PortalAuthSignInError.unavailable` with `noRuntimeDirectory`,
    ///   `runtimeDirectoryUnsafe` or `channelFailed`.
    init(applicationId: String?, environmentId: String, runtimeDirectory: String? = RuntimeFolder.path) throws(PortalAuthSignInError) {
        let folder = try Self.folder(in: runtimeDirectory)
        let name = Self.name(applicationId: applicationId ?? "", environmentId: environmentId)
        socketPath = folder + "/" + name + ".sock"
        lockPath = folder + "/" + name + ".lock"
        guard socketPath.utf8.count <= Self.maxSocketPath else {
            throw .unavailable(reason: .channelFailed, detail: "the runtime folder's path is too long for a socket")
        }
    }

    /// `$XDG_RUNTIME_DIR/portal-auth`, checked: the runtime folder must be a folder of this
    /// user's with no access for anyone else, and so must the channels' folder in it, which
    /// is made (mode 0700) when it is missing.
    private static func folder(in runtime: String?) throws(PortalAuthSignInError) -> String {
        guard let runtime, runtime.hasPrefix("/") else {
            throw .unavailable(reason: .noRuntimeDirectory, detail: nil)
        }
        var status = stat()
        guard stat(runtime, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .unavailable(reason: .noRuntimeDirectory, detail: runtime)
        }
        try checkPrivate(status, runtime)
        let folder = runtime + "/" + folderName
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .unavailable(reason: .channelFailed, detail: "cannot make \(folder): errno \(errno)")
        }
        // lstat: a link planted in its place is refused, not followed.
        guard lstat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(folder) is not a folder")
        }
        try checkPrivate(status, folder)
        return folder
    }

    /// `PrivateFolder`'s rule of a folder that is the user's alone, with the channel's details.
    private static func checkPrivate(_ status: stat, _ path: String) throws(PortalAuthSignInError) {
        switch PrivateFolder.sharing(status) {
        case nil:
            return
        case .anotherUsers:
            throw .unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(path) belongs to another user")
        case .openToOthers:
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw .unavailable(reason: .runtimeDirectoryUnsafe, detail: "\(path) has mode \(mode), not 700")
        }
    }

    /// 64-bit FNV-1a of the application id, a NUL and the environment id, in hex. Not a
    /// defence (only the user's own processes reach the folder); were two of the user's apps
    /// to collide, each would still refuse the URLs of the other's redirect URL.
    static func name(applicationId: String, environmentId: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in Array(applicationId.utf8) + [0] + Array(environmentId.utf8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
