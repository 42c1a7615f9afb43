"""End-to-end tests of the C sample `portal-auth-login`, driven through its standard input.

Each test runs the built program (path in PORTAL_AUTH_LOGIN) against the Portal emulator
(base URL in PORTAL_AUTH_TEST_API_HOST) and the Secret Service of the session bus (run it
inside scripts/private-keyring.sh), with a runtime folder of the tests' own
($XDG_RUNTIME_DIR, where the running program and its URL handler meet). The driver answers
each prompt only once the program has shown it; Debian's headless Chromium opens the email's
link as a user would, and Debian's xdg-open starts the program as the URL handler of its
scheme. Standard library only:

    PORTAL_AUTH_LOGIN=... PORTAL_AUTH_TEST_API_HOST=... python3 -m unittest discover -s bindings/c/tests
"""

from __future__ import annotations

import itertools
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.parse
import urllib.request

PROGRAM = os.environ.get("PORTAL_AUTH_LOGIN", "")
API_HOST = os.environ.get("PORTAL_AUTH_TEST_API_HOST", "")
# A bound on waiting for output, so that a program that hangs fails its test instead of
# hanging the suite; no outcome depends on it.
HANG_GUARD_SECONDS = 120
VALGRIND = ["valgrind", "-q", "--error-exitcode=125", "--leak-check=full",
            "--show-leak-kinds=definite", "--errors-for-leak-kinds=definite"]
_environments = itertools.count(1)
# The runtime folder of every run, as a desktop session makes one: the user's, mode 0700.
RUNTIME = tempfile.mkdtemp(prefix="portal-auth-runtime-")


def control(path: str, body: dict[str, object] | None = None) -> dict[str, object]:
    """GET (no body) or POST an emulator control endpoint; its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(API_HOST + "/_emulator/" + path, data=data,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        answer: dict[str, object] = json.load(response)
        return answer


def new_environment(totp: bool, redirect_url: str = "myapp://auth/callback") -> str:
    """A fresh environment, so that each test has its own keyring item."""
    name = f"env-c-sample-{os.getpid()}-{next(_environments)}"
    control("environments", {"id": name, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
                             "redirectUrls": [redirect_url], "totpRequired": totp,
                             "accountAbstraction": False, "autoCreateWallet": False})
    return name


def outbox_link(email: str, key: str = "link", count: int = 1) -> str:
    """The last email's `link` (the redirect with its grant) or `emailLink` (its button),
    once `count` emails to `email` were sent."""
    query = urllib.parse.urlencode({"email": email, "count": count, "timeout": 30})
    messages = control("outbox?" + query)["messages"]
    assert isinstance(messages, list) and len(messages) >= count
    link: str = messages[-1][key]
    return link


def chromium(url: str, profile: str) -> subprocess.Popen[str]:
    """Debian's Chromium, headless, opening `url` as the user's browser; in a PID namespace of
    its own, so that none of its processes outlives it. Its output is the page it ends on."""
    command = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc",
               "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-proxy-server",
               f"--user-data-dir={profile}", "--dump-dom", url]
    if os.geteuid() != 0:
        command[1:1] = ["--map-root-user"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={"HOME": profile, "PATH": "/usr/bin:/bin"})


def current_code(environment: str, email: str) -> str:
    query = urllib.parse.urlencode({"environmentId": environment, "email": email})
    code: str = control("totp?" + query)["code"]
    return code


def wrong_code(environment: str, email: str) -> str:
    """Six digits that are not the current code (nor, 500,000 apart, a neighbouring step's)."""
    return f"{(int(current_code(environment, email)) + 500_000) % 1_000_000:06d}"


def grant_redirect(environment: str, email: str) -> str:
    token = control("grants", {"environmentId": environment, "email": email, "kind": "magic"})["token"]
    return f"myapp://auth/callback?token={token}&authMethod=EMAIL_MAGIC_LINK"


def loopback_redirect() -> str:
    """A loopback redirect URL on a port nobody listens on now, which the emulator hands out."""
    return f"http://127.0.0.1:{control('loopback-port')['port']}/callback"


class _NotFollowing(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments: object) -> None:
        return None


def next_hop(url: str) -> str:
    """Where a redirect at `url` leads, without going there."""
    try:
        urllib.request.build_opener(_NotFollowing).open(url, timeout=30)
    except urllib.error.HTTPError as answer:
        if answer.code in (301, 302, 303, 307, 308):
            return urllib.parse.urljoin(url, answer.headers["Location"])
        raise
    raise AssertionError(f"{url} does not redirect")


class Run:
    """One run of the program: its output so far, and answers to its prompts."""

    def __init__(self, *arguments: str, environment: str | None = None, valgrind: bool = False,
                 env: dict[str, str] | None = None) -> None:
        command = [PROGRAM, "--api-host", API_HOST]
        if environment is not None:
            command += ["--environment", environment]
        command += list(arguments)
        self.process = subprocess.Popen((VALGRIND if valgrind else []) + command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env={**os.environ, "XDG_RUNTIME_DIR": RUNTIME, **(env or {})})
        self.output = ""

    def expect(self, prompt: str) -> str:
        """Reads until the output ends with `prompt`; the output up to it."""
        assert self.process.stdout is not None
        chunks = b""
        while not (self.output + chunks.decode(errors="replace")).endswith(prompt):
            ready, _, _ = select.select([self.process.stdout], [], [], HANG_GUARD_SECONDS)
            if not ready:
                raise AssertionError(f"no prompt {prompt!r} after {self.output + chunks.decode()!r}")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"output ended before {prompt!r}: {self.output + chunks.decode()!r}; "
                                     f"stderr {self.finish()[2]!r}")
            chunks += chunk
        start = len(self.output)
        self.output += chunks.decode()
        return self.output[start:]

    def answer(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        """Closes its input and waits: exit status, the whole standard output, standard error."""
        out, err = self.process.communicate(timeout=HANG_GUARD_SECONDS)
        self.output += out.decode()
        return self.process.returncode, self.output, err.decode()


def run(*arguments: str, environment: str | None = None, valgrind: bool = False,
        env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return Run(*arguments, environment=environment, valgrind=valgrind, env=env).finish()


MAGIC_LINK = ("--from-email", "hello@auth.example.com", "--template-id", "sign-in")


class MagicLinkTests(unittest.TestCase):
    def sign_in(self, environment: str, email: str, valgrind: bool = False, emails: int = 1) -> Run:
        """Email, a line that is not a link, the link (of the `emails`th email to `email`:
        an earlier one's grant is spent); the rest is left to the caller."""
        login = Run(*MAGIC_LINK, environment=environment, valgrind=valgrind)
        login.expect("Email: ")
        login.answer(email)
        self.assertIn(f"A sign-in link is on its way to {email}. Open it, or paste it here.\n", login.expect("Link: "))
        login.answer("otherapp://auth/callback?token=x&authMethod=EMAIL_MAGIC_LINK")
        login.expect("That is not a sign-in link of this app. Link: ")
        login.answer(outbox_link(email, count=emails))
        return login

    def test_first_sign_in_enrolls_totp_then_restore_and_sign_out(self) -> None:
        environment, email = new_environment(totp=True), "first@example.com"
        login = self.sign_in(environment, email)
        shown = login.expect("Code from your authenticator app: ")
        self.assertIn("scan this code with your authenticator app", shown)
        self.assertRegex(shown, "[▀▄█]{20}")  # the QR code, in half blocks
        secret = re.search(r"enter this key in it by hand: ([A-Z2-7]+)\n", shown)
        self.assertIsNotNone(secret)
        # A wrong code may be corrected.
        login.answer(wrong_code(environment, email))
        login.expect("That code is not correct. Check your authenticator app and type the current code.\n"
                     "Code from your authenticator app: ")
        login.answer(current_code(environment, email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        user = re.search(r"Signed in as (eu_\w+)\.\n$", output)
        assert user is not None
        # The session is in the keyring: another run finds it.
        self.assertEqual(run("--restore", environment=environment), (0, f"Signed in as {user[1]}.\n", ""))
        self.assertEqual(run("--sign-out", environment=environment), (0, f"Signed out {user[1]}.\n", ""))
        self.assertEqual(run("--restore", environment=environment), (1, "Not signed in.\n", ""))
        self.assertEqual(run("--sign-out", environment=environment), (0, "Not signed in; nothing to sign out.\n", ""))

    def test_under_valgrind_a_returning_user_is_asked_only_for_the_code(self) -> None:
        environment, email = new_environment(totp=True), "returning@example.com"
        for emails, valgrind in ((1, False), (2, True)):
            login = self.sign_in(environment, email, valgrind=valgrind, emails=emails)
            shown = login.expect("Code from your authenticator app: ")
            self.assertEqual("scan this code" in shown, not valgrind)  # enrolled on the first run only
            login.answer(current_code(environment, email))
            status, output, errors = login.finish()
            self.assertEqual((status, errors), (0, ""))
            self.assertRegex(output, r"Signed in as eu_\w+\.\n$")
        status, output, errors = run("--restore", environment=environment, valgrind=True)
        self.assertEqual((status, errors), (0, ""))

    def test_three_wrong_codes_fail_as_unauthorized(self) -> None:
        environment, email = new_environment(totp=True), "wrong@example.com"
        login = self.sign_in(environment, email)
        login.expect("Code from your authenticator app: ")
        login.answer("abc-def")  # not six digits: asked again, nothing sent
        login.expect("The code is six digits.\nCode from your authenticator app: ")
        wrong = wrong_code(environment, email)
        for attempt in range(3):
            login.answer(f"{wrong[:3]} {wrong[3:]}")  # as authenticator apps show it
            if attempt < 2:
                login.expect("That code is not correct. Check your authenticator app and type the current code.\n"
                             "Code from your authenticator app: ")
        status, _, errors = login.finish()
        self.assertEqual(status, 30)
        self.assertEqual(errors, "That code is not correct. Check your authenticator app and type the current code.\n"
                                 "portal-auth-login: verifying the code failed: Unauthorized (HTTP 401): "
                                 "the TOTP code was not accepted, and the step had not expired.\n")
        self.assertEqual(run("--restore", environment=environment)[0], 1)

    def test_without_totp_the_link_signs_in(self) -> None:
        environment, email = new_environment(totp=False), "open@example.com"
        login = self.sign_in(environment, email)
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Link: Signed in as eu_\w+\.\n$")

    def test_input_ending_stops_at_each_prompt(self) -> None:
        environment = new_environment(totp=True)
        for answers in ([], ["ended@example.com"]):
            login = Run(*MAGIC_LINK, environment=environment)
            for line in answers:
                login.expect("Email: ")
                login.answer(line)
            status, _, errors = login.finish()
            self.assertEqual(status, 3)
            self.assertIn("input ended before the sign-in did; nothing was stored", errors)
        login = self.sign_in(environment, "ended@example.com")
        login.expect("Code from your authenticator app: ")
        status, _, errors = login.finish()
        self.assertEqual(status, 3)

    def test_errors_of_sending(self) -> None:
        environment = new_environment(totp=False)
        cases = [
            ((), "someone@example.com", 12, "needs a MagicLinkConfig"),            # not configured
            (MAGIC_LINK, "  ", 11, "email is blank or unusable. (email)"),        # invalid argument
        ]
        for arguments, email, status, message in cases:
            login = Run(*arguments, environment=environment)
            login.expect("Email: ")
            login.answer(email)
            code, _, errors = login.finish()
            self.assertEqual(code, status)
            self.assertIn("portal-auth-login: signing in by magic link failed: ", errors)
            self.assertIn(message, errors)
        # The emulator refuses to send more: a failure of the send itself.
        login = Run(*MAGIC_LINK, environment=environment)
        login.expect("Email: ")
        control("faults", {"path": "/magic-links", "kind": "status", "status": 429})
        login.answer("limited@example.com")
        code, _, errors = login.finish()
        self.assertEqual(code, 20)
        self.assertIn("portal-auth-login: sending the sign-in link failed: Too many magic links", errors)


class LoopbackMagicLinkTests(unittest.TestCase):
    """A loopback redirect URL: the program finishes by itself once the browser the user opens
    the email in brings the link back; pasting it still works."""

    def start(self, totp: bool, email: str, *arguments: str) -> tuple[Run, str, str]:
        redirect = loopback_redirect()
        environment = new_environment(totp=totp, redirect_url=redirect)
        login = Run(*MAGIC_LINK, "--redirect-url", redirect, *arguments, environment=environment)
        login.expect("Email: ")
        login.answer(email)
        self.assertIn(f"A sign-in link is on its way to {email}. Open it, or paste it here.\n", login.expect("Link: "))
        return login, environment, redirect

    def open_in_chromium(self, email: str) -> str:
        """The email's button, opened in Chromium: the page it ends on."""
        profile = tempfile.mkdtemp(prefix="portal-auth-chromium-")
        try:
            browser = chromium(outbox_link(email, "emailLink"), profile)
            page, _ = browser.communicate(timeout=HANG_GUARD_SECONDS)
            self.assertEqual(browser.returncode, 0)
            return page
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    def test_the_email_opened_in_chromium_signs_in_with_no_paste(self) -> None:
        email = "loopback@example.com"
        login, _, redirect = self.start(False, email)
        page = self.open_in_chromium(email)
        self.assertIn("You are signed in. You can close this window and go back to the application.", page)
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Link: \nSigned in as eu_\w+\.\n$")
        with self.assertRaises(ConnectionRefusedError):  # the listener is gone
            socket.create_connection(("127.0.0.1", int(redirect.split(":")[2].split("/")[0])), timeout=30).close()

    def test_with_totp_the_program_asks_for_the_code_after_the_browser(self) -> None:
        email = "loopback-totp@example.com"
        login, environment, _ = self.start(True, email)
        self.assertIn("enter the code from your authenticator app", self.open_in_chromium(email))
        self.assertIn("scan this code", login.expect("Code from your authenticator app: "))
        login.answer(current_code(environment, email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Signed in as eu_\w+\.\n$")

    def test_the_link_pasted_instead_signs_in_once(self) -> None:
        email = "loopback-pasted@example.com"
        login, _, _ = self.start(False, email)
        login.answer("otherapp://auth/callback?token=x&authMethod=EMAIL_MAGIC_LINK")
        login.expect("That is not a sign-in link of this app. Link: ")
        login.answer(outbox_link(email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Link: Signed in as eu_\w+\.\n$")
        validations = [entry for entry in control("requests")["requests"]  # type: ignore[union-attr]
                       if entry["path"].endswith("/magic-links/validations")]
        grant = urllib.parse.parse_qs(urllib.parse.urlsplit(outbox_link(email)).query)["token"][0]
        self.assertEqual(sum(json.loads(entry["body"]).get("token") == grant for entry in validations), 1)

    def test_a_link_never_opened_times_out(self) -> None:
        login, _, _ = self.start(False, "loopback-late@example.com", "--timeout", "1")
        status, _, errors = login.finish()
        self.assertEqual(status, 50)  # sign-in closed
        self.assertIn("portal-auth-login: signing in by magic link failed: ", errors)


class UrlHandlerTests(unittest.TestCase):
    """The desktop's route for a custom scheme: a .desktop file made the scheme's handler with
    xdg-mime, and Debian's xdg-open starting it with the URL (in a private XDG_DATA_HOME and
    XDG_CONFIG_HOME, and an Xvfb display, as in a graphical session). The handler hands the
    URL to the running program, which completes the sign-in the user is looking at."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.home = tempfile.mkdtemp(prefix="portal-auth-desktop-")
        # A free display number, which Xvfb prints once it is ready.
        cls.xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-nolisten", "tcp"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
        assert cls.xvfb.stdout is not None
        cls.display = ":" + cls.xvfb.stdout.readline().strip()
        cls.desktop_env = {"XDG_DATA_HOME": os.path.join(cls.home, "data"), "XDG_CONFIG_HOME": os.path.join(cls.home, "config"),
                           "XDG_DATA_DIRS": os.path.join(cls.home, "none"), "DISPLAY": cls.display,
                           "XDG_CURRENT_DESKTOP": "", "BROWSER": ""}

    @classmethod
    def tearDownClass(cls) -> None:
        cls.xvfb.terminate()
        cls.xvfb.wait(timeout=HANG_GUARD_SECONDS)
        shutil.rmtree(cls.home, ignore_errors=True)

    def register(self, environment: str) -> None:
        """The .desktop entry of the app's URL handler, made the default for myapp:."""
        applications = os.path.join(self.desktop_env["XDG_DATA_HOME"], "applications")
        os.makedirs(applications, exist_ok=True)
        os.makedirs(self.desktop_env["XDG_CONFIG_HOME"], exist_ok=True)
        with open(os.path.join(applications, "portal-auth-login.desktop"), "w") as entry:
            entry.write("[Desktop Entry]\nType=Application\nName=portal-auth-login\nNoDisplay=true\n"
                        f"Exec={PROGRAM} --api-host {API_HOST} --environment {environment} --redirect %u\n"
                        "MimeType=x-scheme-handler/myapp;\n")
        env = {**os.environ, **self.desktop_env}
        subprocess.run(["xdg-mime", "default", "portal-auth-login.desktop", "x-scheme-handler/myapp"], env=env, check=True,
                       timeout=HANG_GUARD_SECONDS)
        default = subprocess.run(["xdg-mime", "query", "default", "x-scheme-handler/myapp"], env=env, check=True,
                                 capture_output=True, text=True, timeout=HANG_GUARD_SECONDS).stdout
        self.assertEqual(default.strip(), "portal-auth-login.desktop")

    def xdg_open(self, url: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["xdg-open", url], env={**os.environ, **self.desktop_env, "XDG_RUNTIME_DIR": RUNTIME},
                              capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)

    def test_xdg_open_starts_the_handler_which_hands_the_link_to_the_running_program(self) -> None:
        environment, email = new_environment(totp=True), "handler@example.com"
        self.register(environment)
        login = Run(*MAGIC_LINK, environment=environment)
        login.expect("Email: ")
        login.answer(email)
        login.expect("Link: ")
        link = outbox_link(email)
        opened = self.xdg_open(link)
        self.assertEqual((opened.returncode, opened.stdout, opened.stderr),
                         (0, "Handed the sign-in to the running portal-auth-login.\n", ""))
        # The running program completes it: the code is asked for there.
        self.assertIn("scan this code", login.expect("Code from your authenticator app: "))
        login.answer(current_code(environment, email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Signed in as eu_\w+\.\n$")

        # The program has ended: the handler says so, and tries the link itself (spent by now).
        again = self.xdg_open(link)
        self.assertEqual(again.stdout, "No portal-auth-login is running for this environment; signing in here.\n")
        self.assertIn("Unauthorized (HTTP 401)", again.stderr)
        self.assertNotEqual(again.returncode, 0)

    def test_a_handler_with_no_runtime_folder_signs_in_itself(self) -> None:
        environment = new_environment(totp=False)
        status, output, errors = run("--redirect", grant_redirect(environment, "no-runtime@example.com"),
                                     environment=environment, env={"XDG_RUNTIME_DIR": ""})
        self.assertEqual(status, 0)
        self.assertIn("cannot reach a running portal-auth-login", errors)
        self.assertIn("XDG_RUNTIME_DIR is unset", errors)
        self.assertRegex(output, r"^Signed in as eu_\w+\.\n$")


# The desktop's launch of a URL's handler, as a browser or a file manager that uses GIO does
# it in its own process: the URL comes on standard input, so no command line ever holds it.
# It ends once the handler has answered the Open call (or the launch failed).
LAUNCHER = """
import sys
from gi.repository import Gio, GLib
url = sys.stdin.readline().strip()
loop, status = GLib.MainLoop(), []
def launched(source, result):
    try:
        Gio.AppInfo.launch_default_for_uri_finish(result)
        status.append(0)
    except GLib.Error as error:
        print(error.message, file=sys.stderr)
        status.append(1)
    loop.quit()
Gio.AppInfo.launch_default_for_uri_async(url, None, None, launched)
loop.run()
sys.exit(status[0])
"""

# Reads every process's command line (/proc/PID/cmdline, which any local user can read on
# Debian) as fast as it can, for the secret on its standard input's first line: says
# "watching", then "seen PID" for each process it finds holding it, until its input ends;
# then how many scans it made.
WATCHER = """
import os, select, sys
secret = sys.stdin.readline().strip().encode()
print("watching", flush=True)
scans, seen = 0, set()
while not select.select([sys.stdin], [], [], 0)[0]:
    scans += 1
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid in seen:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if secret in cmdline.read():
                    seen.add(pid)
                    print("seen", pid, flush=True)
        except OSError:
            pass
print("scans", scans, flush=True)
"""

APPLICATION = "io.portalhq.SignInTest"


class Watcher:
    """WATCHER, running; `expect` reads its lines, `stop` ends it."""

    def __init__(self, secret: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", WATCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(secret + "\n")
        self.process.stdin.flush()
        assert self.line() == "watching"

    def line(self) -> str:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], HANG_GUARD_SECONDS)
        assert ready, "the watcher said nothing"
        return self.process.stdout.readline().strip()

    def stop(self) -> list[str]:
        """Its lines since the last read: the PIDs it saw, then its count of scans."""
        out, _ = self.process.communicate(timeout=HANG_GUARD_SECONDS)
        return out.split("\n")[:-1]


class BusDeliveryTests(unittest.TestCase):
    """The route of a DBusActivatable desktop entry: the desktop hands the running app (or the
    app the session bus starts for it) the URL through org.freedesktop.Application.Open on
    the session bus, which the library serves as the app's --application-id while it listens.
    The URL is on no command line on the way, which a watcher reading every process's command
    line checks the whole time. The session bus is the private keyring's, whose service folder
    is the tests' (scripts/private-keyring.sh)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.home = tempfile.mkdtemp(prefix="portal-auth-bus-")
        cls.desktop_env = {"XDG_DATA_HOME": os.path.join(cls.home, "data"), "XDG_CONFIG_HOME": os.path.join(cls.home, "config"),
                           "XDG_DATA_DIRS": os.path.join(cls.home, "none"), "XDG_CURRENT_DESKTOP": "", "BROWSER": ""}
        # What a desktop session gives the applications the bus starts: its address, and the
        # runtime folder where the app's instances meet.
        subprocess.run(["dbus-update-activation-environment", "DBUS_SESSION_BUS_ADDRESS", f"XDG_RUNTIME_DIR={RUNTIME}"],
                       check=True, timeout=HANG_GUARD_SECONDS)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.home, ignore_errors=True)

    def register(self, environment: str, output: str) -> None:
        """The app's desktop entry, DBusActivatable (its Exec line with %u is for launchers
        without D-Bus), made the default for myapp:; and its D-Bus service, which starts the
        app for the redirect the desktop hands over, its output going to `output`."""
        applications = os.path.join(self.desktop_env["XDG_DATA_HOME"], "applications")
        os.makedirs(applications, exist_ok=True)
        os.makedirs(self.desktop_env["XDG_CONFIG_HOME"], exist_ok=True)
        command = f"{PROGRAM} --api-host {API_HOST} --environment {environment} --application-id {APPLICATION}"
        with open(os.path.join(applications, f"{APPLICATION}.desktop"), "w") as entry:
            entry.write("[Desktop Entry]\nType=Application\nName=portal-auth-login\nNoDisplay=true\nDBusActivatable=true\n"
                        f"Exec={command} --redirect %u\nMimeType=x-scheme-handler/myapp;\n")
        with open(os.path.join(os.environ["PORTAL_AUTH_TEST_BUS_SERVICES"], f"{APPLICATION}.service"), "w") as service:
            service.write(f"[D-BUS Service]\nName={APPLICATION}\nExec=/bin/sh -c 'exec {command} --activated > {output} 2>&1'\n")
        subprocess.run(["xdg-mime", "default", f"{APPLICATION}.desktop", "x-scheme-handler/myapp"],
                       env={**os.environ, **self.desktop_env}, check=True, timeout=HANG_GUARD_SECONDS)

    def launch(self, url: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["/usr/bin/python3", "-c", LAUNCHER], input=url + "\n", env={**os.environ, **self.desktop_env},
                              capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)

    def watch(self, url: str) -> Watcher:
        """A watcher for the URL's grant, shown to see one: a process holding it on its
        command line is seen."""
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["token"][0]
        watcher = Watcher(token)
        self.addCleanup(watcher.process.kill)
        holder = subprocess.Popen(["/bin/sh", "-c", "read line", "sh", token], stdin=subprocess.PIPE)
        self.assertEqual(watcher.line(), f"seen {holder.pid}")
        holder.communicate(timeout=HANG_GUARD_SECONDS)
        return watcher

    def assert_never_seen(self, watcher: Watcher) -> None:
        lines = watcher.stop()
        self.assertEqual(len(lines), 1, lines)  # no "seen" since the holder's
        self.assertRegex(lines[0], r"^scans [1-9]")

    def test_the_bus_starts_the_app_which_signs_in_and_no_command_line_holds_the_grant(self) -> None:
        environment = new_environment(totp=False)
        url = grant_redirect(environment, "activated@example.com")
        output = os.path.join(self.home, "activated")
        os.mkfifo(output)
        self.register(environment, output)
        watcher = self.watch(url)
        reader = subprocess.Popen(["cat", output], stdout=subprocess.PIPE, text=True)  # the app's output, to its end
        launched = self.launch(url)
        self.assertEqual((launched.returncode, launched.stderr), (0, ""))
        printed, _ = reader.communicate(timeout=HANG_GUARD_SECONDS)
        self.assertRegex(printed, r"^Signed in as eu_\w+\.\n$")
        self.assert_never_seen(watcher)
        status, restored, _ = run("--application-id", APPLICATION, "--restore", environment=environment)
        self.assertEqual((status, restored), (0, printed))

    def test_the_running_app_takes_the_link_the_desktop_opens(self) -> None:
        environment, email = new_environment(totp=False), "bus-running@example.com"
        self.register(environment, os.devnull)
        login = Run(*MAGIC_LINK, "--application-id", APPLICATION, environment=environment)
        login.expect("Email: ")
        login.answer(email)
        login.expect("Link: ")
        url = outbox_link(email)
        watcher = self.watch(url)
        launched = self.launch(url)
        self.assertEqual((launched.returncode, launched.stderr), (0, ""))
        login.process.wait(HANG_GUARD_SECONDS)  # it ends by itself, signed in
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Signed in as eu_\w+\.\n$")
        self.assert_never_seen(watcher)


class RedirectTests(unittest.TestCase):
    def test_a_forwarded_redirect_signs_in_once(self) -> None:
        environment = new_environment(totp=False)
        url = grant_redirect(environment, "forwarded@example.com")
        status, output, errors = run("--redirect", url, environment=environment)
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"^No portal-auth-login is running for this environment; signing in here\.\n"
                                 r"Signed in as eu_\w+\.\n$")
        # The grant is spent: another process cannot use it again.
        status, output, errors = run("--redirect", url, environment=environment)
        self.assertEqual((status, output), (30, "No portal-auth-login is running for this environment; signing in here.\n"))
        self.assertEqual(errors, "This sign-in link was already used or has expired. Request a new one.\n"
                                 "portal-auth-login: signing in failed: Unauthorized (HTTP 401): the redirect's grant "
                                 "was refused (used, expired or not Portal's); request a new link.\n")

    def test_a_forwarded_redirect_with_totp_asks_for_the_code(self) -> None:
        environment, email = new_environment(totp=True), "forwarded-totp@example.com"
        login = Run("--redirect", grant_redirect(environment, email), environment=environment)
        login.expect("Code from your authenticator app: ")
        login.answer(current_code(environment, email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Signed in as eu_\w+\.\n$")

    def test_a_url_of_another_app(self) -> None:
        status, output, errors = run("--redirect", "otherapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK",
                                     environment=new_environment(totp=False))
        self.assertEqual((status, output), (4, ""))
        self.assertIn("not a sign-in link of this app", errors)

    def test_an_error_redirect_fails_with_its_detail(self) -> None:
        status, _, errors = run("--redirect", "myapp://auth/callback?error=access_denied",
                                environment=new_environment(totp=False))
        self.assertEqual(status, 14)  # authentication failed
        self.assertIn("access_denied", errors)

    def test_no_server(self) -> None:
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            host = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, not listening: refused
            status, _, errors = Run("--api-host", host, "--redirect", "myapp://auth/callback?token=t&authMethod=EMAIL_MAGIC_LINK",
                                    environment="env-open").finish()
        self.assertEqual(status, 32)
        self.assertIn("portal-auth-login: signing in failed: Network failure", errors)

    def test_no_keyring(self) -> None:
        env = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"}
        status, _, errors = run("--restore", environment="env-open", env=env)
        self.assertEqual(status, 18)  # session storage failure
        self.assertIn("portal-auth-login: reading the stored session failed: ", errors)


class BrowserTests(unittest.TestCase):
    # The browser: curl, which loads the authorize URL and follows the fake provider's
    # redirect back to the program's loopback listener.
    FETCHING = {"BROWSER": "curl -sfL -o /dev/null"}

    def test_google_and_apple(self) -> None:
        redirect = loopback_redirect()
        environment = new_environment(totp=False, redirect_url=redirect)
        for provider, name in (("google", "Google"), ("apple", "Apple")):
            status, output, errors = run("--redirect-url", redirect, "--browser", provider,
                                         environment=environment, env=self.FETCHING)
            self.assertEqual((status, errors), (0, ""))
            self.assertRegex(output, f"^Opening your browser to sign in with {name}; waiting for it to come back.\n"
                                     r"Signed in as eu_\w+\.\n$")

    def test_with_totp(self) -> None:
        redirect = loopback_redirect()
        environment = new_environment(totp=True, redirect_url=redirect)
        email = control("control")["oauthEmail"]
        assert isinstance(email, str)
        login = Run("--redirect-url", redirect, "--browser", "google", environment=environment,
                    env=self.FETCHING, valgrind=True)
        self.assertIn("scan this code", login.expect("Code from your authenticator app: "))
        login.answer(current_code(environment, email))
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))

    def test_a_browser_that_never_comes_back_times_out(self) -> None:
        redirect = loopback_redirect()
        environment = new_environment(totp=False, redirect_url=redirect)
        status, _, errors = run("--redirect-url", redirect, "--browser", "apple", "--timeout", "1",
                                environment=environment, env={"BROWSER": "true"})
        self.assertEqual(status, 50)  # sign-in closed
        self.assertIn("portal-auth-login: signing in in the browser failed: ", errors)

    def test_with_no_browser_the_address_is_shown_and_where_it_lands_is_pasted(self) -> None:
        # Over SSH: no browser here. The user opens the address on the laptop; the provider
        # sends that browser to this machine's loopback address, which is not there, and the
        # address it shows is pasted back.
        redirect = loopback_redirect()
        environment = new_environment(totp=False, redirect_url=redirect)
        login = Run("--redirect-url", redirect, "--browser", "google", environment=environment,
                    env={"BROWSER": "/bin/false", "PATH": "/nonexistent"})
        shown = login.expect("Then paste the address the browser ends on.\nLink: ")
        address = shown.split("Open this address in a browser:\n")[1].split("\n")[0]
        landed = address
        while not landed.startswith(redirect):  # the provider's redirects, as a browser follows them
            landed = next_hop(landed)
        login.answer(landed)
        status, output, errors = login.finish()
        self.assertEqual((status, errors), (0, ""))
        self.assertRegex(output, r"Signed in as eu_\w+\.\n$")

    def test_a_redirect_url_that_is_not_loopback(self) -> None:
        status, _, errors = run("--browser", "google", environment="env-open", env=self.FETCHING)
        self.assertEqual(status, 51)  # sign-in unavailable
        self.assertIn("loopback redirect URL", errors)


class CommandLineTests(unittest.TestCase):
    def test_help(self) -> None:
        status, output, errors = run("--help")
        self.assertEqual((status, errors), (0, ""))
        self.assertTrue(output.startswith("Usage: portal-auth-login --environment ID [OPTION]...\n"))
        self.assertIn("Exit status:", output)

    def test_wrong_command_lines(self) -> None:
        cases = [
            ((), "--environment is required"),
            (("--environment",), "a value is missing after --environment"),
            (("--environment", "e", "--frobnicate"), "unknown option --frobnicate"),
            (("--environment", "e", "--restore", "--sign-out"),
             "use one of --redirect, --activated, --browser, --restore and --sign-out"),
            (("--environment", "e", "--activated"), "--activated needs --application-id"),
            (("--environment", "e", "--browser", "yahoo"), "--browser takes google or apple, not yahoo"),
            (("--environment", "e", "--browser", "google", "--timeout", "0"), "--timeout takes a whole number of seconds from 1, not 0"),
            (("--environment", "e", "--restore", "--timeout", "5"), "--timeout goes with --browser, --activated or a magic link"),
        ]
        for arguments, message in cases:
            status, output, errors = Run(*arguments).finish()
            self.assertEqual((status, output), (2, ""), arguments)
            self.assertEqual(errors, f"portal-auth-login: {message}\nTry 'portal-auth-login --help'.\n")

    def test_options_the_library_refuses(self) -> None:
        status, _, errors = run("--restore", "--redirect-url", "", environment="env-open")
        self.assertEqual(status, 11)  # invalid argument, named
        self.assertIn("(redirect_url)", errors)


def tearDownModule() -> None:
    shutil.rmtree(RUNTIME, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
