import CDesktop
#if canImport(Glibc)
import Glibc
#endif

/// Opens an authorize URL for the user; installed with `PortalAuth.setBrowserOpener`.
///
/// `ephemeral` is the client's `prefersEphemeralWebBrowserSession`: a host that can open a
/// private window may honour it. The opener runs once per browser sign-in, after the
/// loopback listener is already answering, on a thread of its own (`OpenerThread`): it may
/// block, and may call the library and wait for the result. It should return once the
/// browser is launched. Throwing ends the sign-in as `PortalAuthSignInError.unavailable`
/// (`.openerFailed`); throw a `BrowserOpenerError` to say why.
public typealias BrowserOpener = @Sendable (_ url: String, _ ephemeral: Bool) throws -> Void

/// The default opener: each command of `$BROWSER` in turn (a `:`-separated list; `%s` in a
/// command stands for the URL, `%%` for `%`, and without `%s` the URL is the last argument),
/// then `xdg-open`, then (inside a Flatpak sandbox) the OpenURI portal. Each command is
/// spawned, never through a shell. One that ends with a failure
/// within a short grace (xdg-open with no browser configured, no display) gives way to the
/// next; one still running then is taken as the launched browser (a browser may run for
/// hours) and reaped by a thread of its own when it exits. There is no generic private
/// window: `ephemeral` is not used.
struct SystemBrowser: Sendable {
    /// `$BROWSER`, or nil.
    let browser: String?
    /// `$PATH`, searched for programs named without a `/`.
    let path: String?
    /// How long a command may take to fail before it counts as the launched browser.
    var failureGrace = Duration.seconds(2)

    /// As the process environment says now.
    static var current: SystemBrowser {
        SystemBrowser(browser: getenv("BROWSER").map { String(cString: $0) },
                      path: getenv("PATH").map { String(cString: $0) })
    }

    /// `detail`: how the last command that started ended, or nil when none could start.
    struct NoBrowser: Error {
        let detail: String?
    }

    func open(_ url: String, ephemeral: Bool) throws(NoBrowser) {
        var lastFailure: String?
        for command in commands(for: url) {
            guard let program = resolve(command[0]) else { continue }
            guard let process = ChildProcess.spawn(program, arguments: command) else { continue }
            if let status = process.watchExit()?.status(within: failureGrace), status != 0 {
                lastFailure = "\(program) failed (wait status \(status))"
                PortalAuthLog.emit(.warning, "Browser sign-in: \(lastFailure ?? program).")
                continue
            }
            PortalAuthLog.emit(.info, "Browser sign-in: opened the browser with \(program).")
            return
        }
        // Inside a Flatpak sandbox the desktop starts the user's browser through the portal.
        if FlatpakSandbox.isInside, pa_portal_open_uri(url) != 0 {
            PortalAuthLog.emit(.info, "Browser sign-in: opened the browser through the OpenURI portal.")
            return
        }
        let remedy = FlatpakSandbox.isInside ? "the OpenURI portal did not start one" : "set $BROWSER or install xdg-utils (xdg-open)"
        PortalAuthLog.emit(.warning, "Browser sign-in: no browser was found (\(remedy)); show the user the URL the error carries.")
        throw NoBrowser(detail: lastFailure)
    }

    /// The argument vectors to try, in order, with the URL in place.
    func commands(for url: String) -> [[String]] {
        var commands: [[String]] = []
        for entry in (browser ?? "").split(separator: ":") {
            let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard !words.isEmpty else { continue }
            var placed = false
            let arguments = words.map { Self.substitute(url, into: $0, placed: &placed) }
            commands.append(placed ? arguments : arguments + [url])
        }
        commands.append(["xdg-open", url])
        return commands
    }

    /// `word` with `%s` replaced by `url` (setting `placed`) and `%%` by `%`; the URL itself
    /// is never rescanned.
    private static func substitute(_ url: String, into word: Substring, placed: inout Bool) -> String {
        var result = ""
        var index = word.startIndex
        while index < word.endIndex {
            let next = word.index(after: index)
            if word[index] == "%", next < word.endIndex, word[next] == "s" || word[next] == "%" {
                if word[next] == "s" {
                    result += url
                    placed = true
                } else {
                    result += "%"
                }
                index = word.index(after: next)
            } else {
                result.append(word[index])
                index = next
            }
        }
        return result
    }

    /// The executable `program` names: itself when it has a `/`, else the first match in PATH.
    private func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
