import CLibraryLoader
#if canImport(Glibc)
import Glibc
#endif

/// The proxy the desktop is set to use, for a client whose environment names none
/// (docs/network.md "Proxies"): GIO's resolver (GNOME's settings or libproxy, the
/// ProxyResolver portal in a Flatpak sandbox; a PAC script is what it evaluates). Asked on a
/// thread of its own, since a lookup may block, and kept for a short while: the next
/// requests go at once, and a change of network is seen within that while.
final class DesktopProxy: Sendable {
    /// How long an answer is kept.
    static let lifetime: Duration = .seconds(30)

    private struct Answer {
        let route: ProxyRoute
        let until: ContinuousClock.Instant
    }

    private let kept = Locked<Answer?>(nil)

    /// The route to `url` (every request of a client goes to one origin, so one answer
    /// serves them all). A resolver that fails leaves the request direct, and says why.
    func route(for url: String) async -> ProxyRoute {
        if let answer = kept.withLock({ $0 }), answer.until > .now { return answer.route }
        let route = await Self.lookUp(url)
        kept.withLock { $0 = Answer(route: route, until: .now.advanced(by: Self.lifetime)) }
        return route
    }

    private static func lookUp(_ url: String) async -> ProxyRoute {
        await withCheckedContinuation { (continuation: CheckedContinuation<ProxyRoute, Never>) in
            let started = DetachedThread.start(name: "portal-auth-pxy") {
                continuation.resume(returning: resolve(url))
            }
            if started != 0 {
                PortalAuthLog.emit(.warning, "The desktop's proxy could not be asked (no thread, error \(started)); going direct.")
                continuation.resume(returning: .direct)
            }
        }
    }

    private static func resolve(_ url: String) -> ProxyRoute {
        var text = [CChar](repeating: 0, count: 2048)
        let answer = pa_desktop_proxy(url, &text, text.count)
        let said = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch answer {
        case PA_DESKTOP_PROXY_THROUGH:
            let route = ProxyRoute.through(said)
            PortalAuthLog.emit(.debug, "The desktop's proxy for the API: \(route.displayName ?? "").")
            return route
        case PA_DESKTOP_PROXY_DIRECT:
            return .direct
        default:
            PortalAuthLog.emit(.warning, "The desktop's proxy is unknown (\(said)); going direct.")
            return .direct
        }
    }
}
