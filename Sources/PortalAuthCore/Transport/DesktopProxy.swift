import CDesktop
#if canImport(Glibc)
import Glibc
#endif

/// The proxy the desktop is set to use, for a client whose environment names none
/// (docs/network.md "Proxies"): GIO's resolver (GNOME's settings or libproxy, the
/// ProxyResolver portal in a Flatpak sandbox; a PAC script is what it evaluates). Asked on a
/// thread of its own, since a lookup may block, one lookup at a time for all the client's
/// requests, and kept for a short while: the next requests go at once, and a change of
/// network is seen within that while. A request waits for it no longer than its connect
/// timeout, then goes direct.
final class DesktopProxy: Sendable {
    /// How long an answer is kept.
    static let lifetime: Duration = .seconds(30)

    private struct Answer {
        let route: ProxyRoute
        let until: ContinuousClock.Instant
    }

    private struct State {
        var answer: Answer?
        var lookingUp = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<ProxyRoute, Never>] = [:]
    }

    private let state = Locked(State())

    /// The route to `url` (every request of a client goes to one origin, so one answer
    /// serves them all), waited for at most `limit`. A resolver that fails, or answers too
    /// late, leaves the request direct, and the log says why.
    func route(for url: String, within limit: Duration) async -> ProxyRoute {
        if let answer = state.withLock({ $0.answer }), answer.until > .now { return answer.route }
        return await withCheckedContinuation { (continuation: CheckedContinuation<ProxyRoute, Never>) in
            let (waiter, starts) = state.withLock { state -> (Int, Bool) in
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                defer { state.lookingUp = true }
                return (state.nextWaiter, !state.lookingUp)
            }
            if starts { lookUp(url) }
            Task {
                try? await Task.sleep(for: limit)
                guard let late = state.withLock({ $0.waiters.removeValue(forKey: waiter) }) else { return }
                PortalAuthLog.emit(.warning, "The desktop's proxy did not answer within the connect timeout; going direct.")
                late.resume(returning: .direct)
            }
        }
    }

    private func lookUp(_ url: String) {
        let started = DetachedThread.start(name: "portal-auth-pxy") { [self] in settle(Self.resolve(url)) }
        if started != 0 {
            PortalAuthLog.emit(.warning, "The desktop's proxy could not be asked (no thread, error \(started)); going direct.")
            settle(.direct)
        }
    }

    /// Keeps the answer and gives it to every request still waiting.
    private func settle(_ route: ProxyRoute) {
        let waiting = state.withLock { state -> [CheckedContinuation<ProxyRoute, Never>] in
            state.answer = Answer(route: route, until: .now.advanced(by: Self.lifetime))
            state.lookingUp = false
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume(returning: route) }
    }

    private static func resolve(_ url: String) -> ProxyRoute {
        var text = [CChar](repeating: 0, count: 2048)
        let answer = pa_desktop_proxy(url, &text, text.count)
        let said = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch answer {
        case PA_DESKTOP_PROXY_THROUGH:
            let route = ProxyRoute.through(ProxyAddress(said))
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
