import Foundation
import Testing
@testable import PortalAuthCore

/// The default browser opener: `$BROWSER`, else `xdg-open`, spawned without a shell.
@Suite struct BrowserOpenerTests {
    @Test func browserIsAColonSeparatedListOfCommandsThenXdgOpen() {
        let url = "http://127.0.0.1:1/a?b=1&c=$(id);'\"`x` %s"
        let browser = SystemBrowser(browser: "firefox:: chromium --incognito %s :w3m -o x=%s%%s:%%s", path: nil)
        #expect(browser.commands(for: url) == [
            ["firefox", url],
            ["chromium", "--incognito", url],
            ["w3m", "-o", "x=\(url)%s"],
            ["%s", url],
            ["xdg-open", url],
        ])
        #expect(SystemBrowser(browser: nil, path: nil).commands(for: url) == [["xdg-open", url]])
        #expect(SystemBrowser(browser: " : ", path: nil).commands(for: url) == [["xdg-open", url]])
    }

    @Test func theURLReachesTheProgramAsOneArgumentUntouched() throws {
        let url = "http://127.0.0.1:1/a?b=1&c=$(touch /tmp/pwned);'\"`x` *"
        let same = try #require(ChildProcess.spawn("/usr/bin/test", arguments: ["test", url, "=", url]))
        #expect(same.wait() == 0)
        let other = try #require(ChildProcess.spawn("/usr/bin/test", arguments: ["test", url, "=", url + " "]))
        #expect(other.wait() != 0)
        #expect(ChildProcess.spawn("/nonexistent/program", arguments: ["program"]) == nil)
    }

    /// The app can still show the user the URL: the error carries it.
    @Test func withNoProgramToStartTheSignInIsUnavailableAndSaysSo() async throws {
        let emulator = try await Emulator.start()
        let (client, _, port) = try await loopbackClient(emulator)
        let nowhere = SystemBrowser(browser: "/nonexistent/browser:missing-browser %s", path: "/nonexistent")
        #expect(throws: SystemBrowser.NoBrowser.self) { try nowhere.open("http://127.0.0.1:1/", ephemeral: false) }
        client.setBrowserOpener { try nowhere.open($0, ephemeral: $1) }
        await LogLines.recording { lines in
            let error = await caught { _ = try await client.signInWithGoogle() }
            guard case .unavailable(.noBrowser, nil, let url?) = error as? PortalAuthSignInError else {
                Issue.record("expected unavailable(noBrowser) with the URL, got \(String(describing: error))")
                return
            }
            #expect(url.contains("/oauth/google/authorize"))
            #expect(lines.all.contains { $0.contains("no browser was found") && $0.contains("the URL the error carries") })
        }
        #expect(try await emulator.requests("/oauth/urls").count == 1)
        #expect(LoopbackClient.connectErrno(port) == ECONNREFUSED)
    }

    @Test func aCommandThatFailsAtOnceGivesWayToTheNext() throws {
        // `false` ends at once with status 1: not a browser. `true` succeeds. A grace long
        // enough for a busy machine to run them.
        let grace = Duration.seconds(60)
        let failing = SystemBrowser(browser: "/usr/bin/false %s", path: "/nonexistent", failureGrace: grace)
        let error = try #require(#expect(throws: SystemBrowser.NoBrowser.self) { try failing.open("http://127.0.0.1:1/", ephemeral: false) })
        #expect(error.detail == "/usr/bin/false failed (wait status 256)")
        #expect(PortalAuth.unavailable(openerFailure: error, url: "u") == .unavailable(reason: .noBrowser, detail: error.detail, authorizeUrl: "u"))
        let next = SystemBrowser(browser: "/usr/bin/false %s:/usr/bin/true %s", path: "/nonexistent", failureGrace: grace)
        try next.open("http://127.0.0.1:1/", ephemeral: false)
        // A command still running after the grace is the launched browser.
        let running = try #require(ChildProcess.spawn("/usr/bin/sleep", arguments: ["sleep", "30"]))
        let watch = try #require(running.watchExit())
        #expect(watch.status(within: .milliseconds(50)) == nil)
        kill(running.pid, SIGKILL)
        #expect(watch.status(within: .seconds(30)) == SIGKILL)
    }

    @Test func theFirstProgramFoundIsTheBrowser() async throws {
        let emulator = try await Emulator.start()
        let (client, _, _) = try await loopbackClient(emulator)
        // curl as the browser: it loads the provider's page and follows the redirect.
        let curl = SystemBrowser(browser: "/nonexistent/browser:curl --silent --location --output /dev/null %s",
                                 path: "/nonexistent:/usr/bin")
        client.setBrowserOpener { try curl.open($0, ephemeral: $1) }
        #expect(try await client.signInWithGoogle().authenticated != nil)
    }
}
