#if canImport(Glibc)
import Glibc
#endif

/// The user's runtime folder, where the library keeps what only the user's processes of
/// this session share: the redirect channels, the keyring store's lock files.
enum RuntimeFolder {
    /// `$XDG_RUNTIME_DIR`; inside a Flatpak sandbox, the app's own part of it,
    /// `app/$FLATPAK_ID`, the one part that every instance of the app (each in a sandbox of
    /// its own) and the host share. Nil when it is unset.
    static var path: String? {
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }) else { return nil }
        return FlatpakSandbox.applicationId.map { "\(runtime)/app/\($0)" } ?? runtime
    }
}
