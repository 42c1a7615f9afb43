#if canImport(Glibc)
import Glibc
#endif

/// What this process's user namespace shows of other users, read anew each time (a process
/// may enter another namespace). Inside one that maps only the user (a Flatpak app,
/// `unshare -U`, `bwrap --unshare-user`), every id it does not map (root's among them) reads
/// as the overflow uid: who owns such a file cannot be told.
struct UserNamespace {
    /// The id unmapped users read as (`/proc/sys/kernel/overflowuid`, 65534 by default).
    let overflowUid: uid_t
    /// Whether root, outside, has an id here: false inside a namespace that maps only the
    /// user, where root's files read as the overflow uid's.
    let mapsRoot: Bool

    /// This process's, as `/proc` says now; a `/proc` that cannot be read counts as the
    /// host's own namespace, which maps everyone.
    static func current() -> UserNamespace {
        let overflow = ProcText.firstLine("/proc/sys/kernel/overflowuid").flatMap { uid_t($0) }
        // Each line of uid_map: first id inside, first id outside, how many.
        let mapsRoot = ProcText.read("/proc/self/uid_map").map { map in
            map.split(separator: "\n").contains { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: true).compactMap { UInt64($0) }
                return fields.count == 3 && fields[1] == 0 && fields[2] > 0
            }
        }
        return UserNamespace(overflowUid: overflow ?? 65534, mapsRoot: mapsRoot ?? true)
    }

    /// Whether `owner` may be root's: root itself, or, where root is not mapped, the
    /// overflow uid.
    func mayBeRoot(_ owner: uid_t) -> Bool {
        owner == 0 || (!mapsRoot && owner == overflowUid)
    }
}
