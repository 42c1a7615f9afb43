#!/usr/bin/python3
"""The GTK app driven end to end, as a user would: under Xvfb, inside the private D-Bus
session and keyring of scripts/private-keyring.sh, against the Portal emulator in
PORTAL_AUTH_TEST_API_HOST. The app is the desktop's handler of its redirect scheme (its
.desktop file and `xdg-mime default`), and the desktop's browser is a stand-in that follows
the provider's redirect and hands it to xdg-open, as a browser hands a custom scheme to the
desktop. The test reads and drives the window through AT-SPI (the accessibility bus of
at-spi-bus-launcher), waiting on its events, never sleeping; it takes screenshots from the
X server's framebuffer once the window has drawn (XDamage), reads the QR code with zbarimg,
computes the TOTP code from what it read, and quits with a call in flight.

    test_app.py APP_BINARY DESKTOP_FILE OUTPUT_FOLDER

Closes with "gtk-app: N passed, 0 failed"."""

import base64
import ctypes
import hashlib
import hmac
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
import zlib

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import GLib  # noqa: E402
import pyatspi  # noqa: E402

APP_ID = "io.portalhq.SignInExample"
SCHEME = "io.portalhq.signinexample"
REDIRECT = f"{SCHEME}://auth/callback"
API_HOST = os.environ["PORTAL_AUTH_TEST_API_HOST"]
WAIT = 60  # seconds: far beyond any step here; a wait this long is a failure

passed = failed = 0


def check(condition: bool, what: str) -> None:
    global passed, failed
    if condition:
        passed += 1
        print(f"ok: {what}", flush=True)
    else:
        failed += 1
        print(f"FAILED: {what}", file=sys.stderr, flush=True)


def control(method: str, path: str, body: object = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(API_HOST + "/_emulator/" + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        raw = response.read()
    return json.loads(raw) if raw else {}


def totp_code(secret: str) -> str:
    """RFC 6238 (SHA-1, 30 s, 6 digits), as the user's authenticator app computes it."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(time.time() // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def secret_of(link: str) -> str:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
    return query["secret"][-1]


class Screen:
    """Xvfb on a display of its own (no TCP), its framebuffer in an XWD file, and XDamage
    through Xlib, to know when a window has drawn."""

    def __init__(self, folder: str):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        ready, told = os.pipe()
        self.process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(told), "-screen", "0", "1024x768x24", "-fbdir", folder, "-nolisten", "tcp"],
            pass_fds=[told], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(told)
        # The number and its newline come in two writes: read both before closing, or the
        # server dies writing the second.
        with os.fdopen(ready, "rb") as told_back:
            number = told_back.readline().decode().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = ":" + number
        self.xlib = ctypes.CDLL("libX11.so.6")
        self.damage = ctypes.CDLL("libXdamage.so.1")
        self.xlib.XOpenDisplay.restype = ctypes.c_void_p
        self.xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
        for name in ("XFlush", "XPending", "XConnectionNumber", "XCloseDisplay"):
            getattr(self.xlib, name).argtypes = [ctypes.c_void_p]
        self.xlib.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.damage.XDamageQueryExtension.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
        self.damage.XDamageCreate.restype = ctypes.c_ulong
        self.damage.XDamageCreate.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int]
        self.damage.XDamageSubtract.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        self.damage.XDamageDestroy.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        self.connection = self.xlib.XOpenDisplay(self.display.encode())
        event_base, error_base = ctypes.c_int(), ctypes.c_int()
        if not self.connection:
            raise RuntimeError(f"cannot open the display {self.display}")
        if not self.damage.XDamageQueryExtension(self.connection, ctypes.byref(event_base), ctypes.byref(error_base)):
            raise RuntimeError("no XDamage on the display")

    def window_of(self, pid: int) -> int:
        """The app's top-level window (xdotool reads _NET_WM_PID)."""
        found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--pid", str(pid)],
                               env=dict(os.environ, DISPLAY=self.display), capture_output=True, text=True, timeout=WAIT)
        return int(found.stdout.split()[0])

    def geometry(self, window: int) -> tuple[int, int, int, int]:
        """The window's left, top, width and height on the screen."""
        shell = subprocess.run(["xdotool", "getwindowgeometry", "--shell", str(window)],
                               env=dict(os.environ, DISPLAY=self.display), capture_output=True, text=True, timeout=WAIT)
        values = dict(line.split("=", 1) for line in shell.stdout.split())
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def pixels(self) -> tuple[int, int, bytes]:
        """The screen now, from Xvfb's XWD framebuffer: width, height, and a grey byte a pixel."""
        with open(os.path.join(self.folder, "Xvfb_screen0"), "rb") as file:
            raw = file.read()
        fields = struct.unpack(">25I", raw[:100])
        header_size, width, height = fields[0], fields[4], fields[5]
        self.width = width
        bits_per_pixel, bytes_per_line, colours = fields[11], fields[12], fields[19]
        if bits_per_pixel != 32:
            raise RuntimeError(f"unexpected XWD depth {bits_per_pixel}")
        start = header_size + 12 * colours
        # Little-endian BGRX: the green byte stands for the grey of black-and-white pixels.
        grey = b"".join(raw[start + row * bytes_per_line + 1:start + row * bytes_per_line + 4 * width:4]
                        for row in range(height))
        return width, height, grey

    def png(self, path: str) -> bytes:
        """The screen as an 8-bit grey PNG at `path`; its pixels."""
        width, height, grey = self.pixels()
        rows = b"".join(b"\0" + grey[row * width:(row + 1) * width] for row in range(height))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        with open(path, "wb") as file:
            file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
                       + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
        return grey

    def shot_when(self, window: int, path: str, ready) -> tuple[bool, bytes]:
        """Screenshots into `path` until `ready(path, grey)` holds, each after the window drew
        again (the first at once); False when the window stopped drawing without it."""
        damage = self.damage.XDamageCreate(self.connection, window, 3)  # XDamageReportNonEmpty
        self.xlib.XFlush(self.connection)
        event = ctypes.create_string_buffer(192)
        fd = self.xlib.XConnectionNumber(self.connection)
        try:
            deadline = time.monotonic() + WAIT
            while True:
                grey = self.png(path)
                if ready(path, grey):
                    return True, grey
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                    return False, grey
                while self.xlib.XPending(self.connection):
                    self.xlib.XNextEvent(self.connection, event)
                self.damage.XDamageSubtract(self.connection, damage, 0, 0)
                self.xlib.XFlush(self.connection)
        finally:
            self.damage.XDamageDestroy(self.connection, damage)
            self.xlib.XFlush(self.connection)

    def stop(self) -> None:
        self.xlib.XCloseDisplay(self.connection)
        self.process.terminate()
        self.process.wait(WAIT)


def zbar(path: str) -> str:
    return subprocess.run(["zbarimg", "--raw", "-q", "-Sbinary", path], capture_output=True, text=True).stdout


class App:
    """The app's process, and its window through AT-SPI."""

    def __init__(self, binary: str, environment: dict, log: str, arguments=(), through=None):
        """The app started with `arguments`; or, `through` a command that starts it (xdg-open
        with a link of its scheme), which ends when the app does."""
        self.log = open(log, "a")
        self.process = subprocess.Popen(through or [binary, *arguments], env=environment, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        self.name = os.path.basename(binary)
        self.frame = self.wait("the app's window", lambda: self.find_frame())

    def find_frame(self):
        for application in pyatspi.Registry.getDesktop(0):
            if application is None:
                continue
            try:
                if application.name != self.name or application.get_process_id() in self.gone:
                    continue
                for child in application:
                    if child.getRoleName() == "frame":
                        return child
            except GLib.Error:
                continue
        return None

    def wait(self, what: str, predicate):
        """The predicate's first true value, evaluated now and after each AT-SPI event."""
        loop = GLib.MainLoop()
        found = {}

        def on_event(_event) -> None:
            if os.environ.get("TRACE_EVENTS"):
                print("event", _event.type, file=sys.stderr)
            try:
                value = predicate()
            except GLib.Error:  # an object gone meanwhile: the next event tells
                return
            if value and not found:
                found["value"] = value
                loop.quit()

        def on_timeout() -> bool:
            loop.quit()
            return GLib.SOURCE_REMOVE

        def on_exit(_pid, _status) -> None:
            loop.quit()

        kinds = ("object:state-changed", "object:property-change", "object:children-changed", "object:text-changed",
                 "window:create", "window:activate")
        pyatspi.Registry.registerEventListener(on_event, *kinds)
        # Listening first: a change between this look and the first event is not missed.
        value = predicate()
        if value:
            pyatspi.Registry.deregisterEventListener(on_event, *kinds)
            return value
        timer = GLib.timeout_add_seconds(WAIT, on_timeout)
        watch = GLib.child_watch_add(GLib.PRIORITY_DEFAULT, self.process.pid, on_exit)
        loop.run()
        pyatspi.Registry.deregisterEventListener(on_event, *kinds)
        for source in (timer, watch):
            if GLib.MainContext.default().find_source_by_id(source):
                GLib.source_remove(source)
        if "value" not in found:
            raise TimeoutError(f"waiting for {what}; the window holds: {self.describe()}")
        return found["value"]

    def describe(self) -> str:
        try:
            return "; ".join(f"{node.getRoleName()} {node.name!r}" for node in self.nodes() if node.name)
        except GLib.Error as error:
            return f"(unreadable: {error.message})"

    def nodes(self, node=None):
        node = node or self.frame
        yield node
        for child in node:
            if child is not None:
                yield from self.nodes(child)

    def find(self, role: str, name=None, starts=None):
        for node in self.nodes():
            if node.getRoleName() != role:
                continue
            if (name is None or node.name == name) and (starts is None or (node.name or "").startswith(starts)):
                return node
        return None

    def title(self) -> str:
        return self.frame.name

    def wait_title(self, title: str) -> bool:
        return bool(self.wait(f"the window titled {title!r}", lambda: self.title() == title))

    def type_into(self, label: str, text: str) -> None:
        self.find("text", label).queryEditableText().setTextContents(text)

    def click(self, label: str) -> None:
        self.find("push button", label).queryAction().doAction(0)

    def shown_secret(self) -> str:
        """The TOTP secret the step shows for typing in by hand."""
        prefix = "Or enter this key: "
        return self.wait("the secret", lambda: self.find("label", starts=prefix)).name.removeprefix(prefix)

    def verify(self, code: str) -> None:
        self.type_into("Authentication code", code)
        self.click("Verify")

    def sign_out(self) -> bool:
        self.click("Sign out")
        return self.wait_title("Sign in")

    gone: set[int] = set()  # the processes of instances that have quit

    def quit(self) -> int:
        """app.quit through GApplication's actions on the session bus; the exit status."""
        pid = self.frame.get_process_id()
        subprocess.run(["gdbus", "call", "--session", "--dest", APP_ID, "--object-path", "/" + APP_ID.replace(".", "/"),
                        "--method", "org.gtk.Actions.Activate", "quit", "[]", "{}"],
                       check=True, capture_output=True, timeout=WAIT)
        status = self.process.wait(WAIT)
        App.gone.add(pid)
        return status


def install_handlers(home: str, binary: str, desktop_file: str, browser: str) -> None:
    """The app as the handler of its scheme, and the test's browser as the handler of http."""
    applications = os.path.join(os.environ["XDG_DATA_HOME"], "applications")
    os.makedirs(applications, exist_ok=True)
    with open(desktop_file) as source:
        entry = source.read().replace("Exec=portal-auth-gtk-example", f"Exec={binary}")
    with open(os.path.join(applications, APP_ID + ".desktop"), "w") as target:
        target.write(entry)
    with open(os.path.join(applications, "test-browser.desktop"), "w") as target:
        target.write(f"[Desktop Entry]\nType=Application\nName=Test browser\nExec={browser} %u\n"
                     "MimeType=x-scheme-handler/http;x-scheme-handler/https;\n")
    for desktop, kind in ((APP_ID + ".desktop", f"x-scheme-handler/{SCHEME}"),
                          ("test-browser.desktop", "x-scheme-handler/http"),
                          ("test-browser.desktop", "x-scheme-handler/https")):
        subprocess.run(["xdg-mime", "default", desktop, kind], check=True)


def main() -> int:
    binary, desktop_file, output = sys.argv[1:4]
    os.makedirs(output, exist_ok=True)
    home = os.environ["HOME"]
    log = os.path.join(output, "app.log")
    # The stand-in browser: it follows the provider's redirect as a browser would, and hands
    # the URL of the app's scheme to the desktop, as a browser does with a scheme it lacks.
    browser = os.path.join(output, "browser")
    with open(browser, "w") as script:
        script.write("#!/bin/sh\nset -e\n"
                     "location=$(curl --silent --show-error --output /dev/null --write-out '%{redirect_url}' \"$1\")\n"
                     "exec xdg-open \"$location\"\n")
    os.chmod(browser, 0o755)

    screen = Screen(os.path.join(output, "framebuffer"))
    bus = subprocess.Popen(["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"],
                           env=dict(os.environ, DISPLAY=screen.display), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        subprocess.run(["gdbus", "wait", "--session", "--timeout", str(WAIT), "org.a11y.Bus"], check=True)
        install_handlers(home, binary, desktop_file, browser)
        environment_id = f"env-gtk-{uuid.uuid4().hex[:10]}"
        control("POST", "environments", {
            "id": environment_id, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"], "redirectUrls": [REDIRECT],
            "totpRequired": True, "accountAbstraction": False, "autoCreateWallet": True,
        })
        environment = dict(os.environ, DISPLAY=screen.display, GDK_BACKEND="x11", GSK_RENDERER="cairo",
                           GTK_A11Y="atspi", GSETTINGS_BACKEND="memory", PORTAL_AUTH_EXAMPLE_ENVIRONMENT_ID=environment_id,
                           PORTAL_AUTH_EXAMPLE_API_HOST=API_HOST, PORTAL_AUTH_EXAMPLE_TEMPLATE_ID="tmpl")
        os.environ.update(DISPLAY=screen.display)  # for xdg-open below, as the desktop has it
        drive(binary, environment, environment_id, screen, output, log)
    finally:
        bus.terminate()
        bus.wait(WAIT)
        screen.stop()
    with open(log) as written:
        said = written.read()
    check(said == "", "the app wrote nothing to its terminal" + ("" if said == "" else f": {said[:500]!r}"))
    print(f"gtk-app: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def drive(binary: str, environment: dict, environment_id: str, screen: Screen, output: str, log: str) -> None:
    # A first launch: nothing stored, so the sign-in page.
    app = App(binary, environment, log)
    check(app.wait_title("Sign in"), "at start-up the app restores nothing and shows the sign-in page")
    window = screen.window_of(app.process.pid)

    email = "gtk-ada@example.com"
    app.type_into("Email address", email)
    app.click("Send magic link")
    check(bool(app.wait("the confirmation", lambda: app.find("label", starts="Check your inbox"))),
          "the magic link is sent, and the window says so")
    link = control("GET", "outbox?email=" + urllib.parse.quote(email))["messages"][-1]["link"]
    # The user opens the link: the desktop starts the scheme's handler, which hands it to the app.
    subprocess.run(["xdg-open", link], check=True, timeout=WAIT)
    check(app.wait_title("Two-factor authentication"), "the link, opened by the desktop, reaches the running app")

    shown_secret = app.shown_secret()
    qr_path = os.path.join(output, "totp-step.png")
    decoded = {}

    def qr_drawn(path: str, _grey: bytes) -> bool:
        decoded["text"] = zbar(path)
        return decoded["text"].startswith("otpauth://")

    drawn, _ = screen.shot_when(window, qr_path, qr_drawn)
    check(drawn and secret_of(decoded["text"]) == shown_secret,
          "zbarimg reads the enrollment link from a screenshot of the TOTP step, with the secret the window shows")

    # A wrong code (five digits: never the right one): the error appears in the window.
    app.verify("12345")
    alert = app.wait("an error in the window", lambda: app.find("alert", starts=""))
    check(bool(alert and alert.name), "a wrong code's error is shown in the window")

    # The code from what the screenshot's QR code carries signs the user in.
    app.verify(totp_code(secret_of(decoded["text"])))
    check(app.wait_title("Your account"), "the code computed from the scanned QR code signs the user in")
    sessions = [s for s in control("GET", "sessions")["sessions"] if s["environmentId"] == environment_id]
    user = app.find("label", starts="Signed in as ")
    check(bool(sessions) and user is not None and user.name == "Signed in as " + sessions[-1]["endUserId"],
          "the signed-in page names the user")
    left, top, width, height = screen.geometry(window)

    def account_drawn(path: str, grey: bytes) -> bool:
        # The page drawn: no QR code left, and the window's light background with dark text on it.
        if zbar(path):
            return False
        inside = b"".join(grey[(top + row) * screen.width + left:(top + row) * screen.width + left + width]
                          for row in range(height))
        light = sum(inside.count(value) for value in range(200, 256))
        return light > len(inside) * 0.8 and any(inside.count(value) for value in range(0, 64))
    drawn, _ = screen.shot_when(window, os.path.join(output, "signed-in.png"), account_drawn)
    check(drawn, "a screenshot of the signed-in page shows the page, and no QR code")
    check(app.quit() == 0, "the app quits cleanly")

    # The session is in the app's own keyring item (its application id, as the desktop file's).
    found = subprocess.run(["secret-tool", "search", "auth_environment_id", environment_id,
                            "application_id", "io.portalhq.SignInExample"], capture_output=True, text=True)
    check(found.returncode == 0 and "attribute.application_id = io.portalhq.SignInExample" in found.stderr + found.stdout,
          "the session is stored in the keyring item of the app's application id")

    # The next launch restores the session from the keyring; then signing out.
    app = App(binary, environment, log)
    check(app.wait_title("Your account"), "the next launch restores the session at start-up")
    check(app.sign_out(), "signing out returns to the sign-in page")

    # Google, then Apple, in the system browser: the provider's redirect reaches the app.
    app.click("Continue with Google")
    check(app.wait_title("Two-factor authentication"), "Google in the browser comes back to the app, at a TOTP step")
    oauth_secret = app.shown_secret()
    app.verify(totp_code(oauth_secret))
    check(app.wait_title("Your account") and app.sign_out(), "the Google user enrolls, is signed in, and signs out")
    app.click("Continue with Apple")
    check(app.wait_title("Two-factor authentication")
          and app.wait("the heading", lambda: app.find("label", "Enter the code from your authenticator app")),
          "Apple in the browser comes back to the app: the enrolled user gives a code, with no QR code")
    app.verify(totp_code(oauth_secret))
    check(app.wait_title("Your account") and app.sign_out(), "the Apple user is signed in, and signs out")
    check(app.quit() == 0, "the app quits cleanly again")

    # A link opened while the app is not running starts it, and it finishes the sign-in.
    grant = control("POST", "grants", {"environmentId": environment_id, "email": email, "kind": "magic"})["token"]
    link = f"{REDIRECT}?token={urllib.parse.quote(grant)}&authMethod=EMAIL_MAGIC_LINK"
    app = App(binary, environment, log, through=["xdg-open", link])
    check(app.wait_title("Two-factor authentication")
          and app.wait("the heading", lambda: app.find("label", "Enter the code from your authenticator app")),
          "a link opened with the app closed starts it at the TOTP step")
    app.verify(totp_code(secret_of(decoded["text"])))
    check(app.wait_title("Your account") and app.sign_out(), "and the user is signed in, and signs out")

    # Quitting with a call in flight: the emulator holds the magic-link request.
    control("POST", "faults", {"path": "/magic-links", "kind": "hold"})
    control("DELETE", "requests")
    app.type_into("Email address", "gtk-held@example.com")
    app.click("Send magic link")
    control("GET", "wait?path=/magic-links&count=1&timeout=30")
    status = app.quit()
    control("POST", "release")
    control("DELETE", "faults")
    check(status == 0, "quitting with a call in flight exits cleanly")

    # With a loopback redirect URL, the magic link comes back to the library's listener: the
    # user's browser opens the link, and the waiting window goes on to the TOTP step.
    loopback = f"http://127.0.0.1:{control('GET', 'loopback-port')['port']}/callback"
    control("POST", "environments", {
        "id": environment_id, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
        "redirectUrls": [REDIRECT, loopback], "totpRequired": True, "accountAbstraction": False, "autoCreateWallet": True,
    })
    app = App(binary, dict(environment, PORTAL_AUTH_EXAMPLE_REDIRECT_URL=loopback), log)
    check(app.wait_title("Sign in"), "the app with a loopback redirect URL starts at the sign-in page")
    loopback_email = "gtk-loopback@example.com"
    app.type_into("Email address", loopback_email)
    app.click("Send magic link")
    link = control("GET", f"outbox?email={urllib.parse.quote(loopback_email)}&count=1&timeout={WAIT}")["messages"][-1]["link"]
    check(link.startswith(loopback + "?"), "the emailed link leads to the loopback listener")
    with urllib.request.urlopen(link, timeout=WAIT) as page:
        answered = page.status
    check(answered == 200 and app.wait_title("Two-factor authentication"),
          "the link opened in the browser finishes the magic link in the waiting app, at the TOTP step")
    app.verify(totp_code(app.shown_secret()))
    check(app.wait_title("Your account") and app.sign_out(), "the loopback user enrolls, is signed in, and signs out")
    check(app.quit() == 0, "the app with a loopback redirect URL quits cleanly")


if __name__ == "__main__":
    sys.exit(main())
