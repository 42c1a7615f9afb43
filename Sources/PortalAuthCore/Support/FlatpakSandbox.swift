#if canImport(Glibc)
import Glibc
#endif

/// The Flatpak sandbox the process may run in (docs/desktop.md "Sandbox store").
enum FlatpakSandbox {
    /// Whether the process runs in one: Flatpak puts `/.flatpak-info` in every sandbox (as
    /// libsecret and xdg-desktop-portal tell one, too).
    static var isInside: Bool { access("/.flatpak-info", F_OK) == 0 }

    /// The sandboxed application's id (`FLATPAK_ID`, which Flatpak sets), when inside one and
    /// it is a reverse-DNS name.
    static var applicationId: String? {
        guard isInside, let id = getenv("FLATPAK_ID").map({ String(cString: $0) }),
              ApplicationId.isReverseDNS(id) else { return nil }
        return id
    }
}
