import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How far the API server's clock is from this machine's, as the `Date` of its last answer
/// said (docs/network.md "Time"). A TOTP step expires by the server's clock: a client whose
/// clock is ten minutes off still reads its expiry, and tells an expired step from a wrong
/// code, by the server's time.
final class ServerClock: Sendable {
    /// Within this many seconds the clocks agree: `Date` has whole seconds, and the answer
    /// took time to arrive, so a smaller difference is no measure of either clock.
    static let tolerance = 2

    private let offset = Atomic<Int>(0)

    /// Takes the skew measured on an answer (server minus local, in seconds), or nothing.
    func record(_ skew: Int?) {
        guard let skew else { return }
        offset.store(abs(skew) <= Self.tolerance ? 0 : skew, ordering: .relaxed)
    }

    /// Seconds the server's clock is ahead of this machine's (negative: behind).
    var skew: Int { offset.load(ordering: .relaxed) }

    /// The server's time now, in seconds since the Unix epoch.
    var serverNow: Int64 { Int64(time(nil)) + Int64(skew) }
}
