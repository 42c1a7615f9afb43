"""Browser sign-in from Python: sign_in_with_google/apple with the host's opener, a loopback
listener, the TOTP branch, the errors in the order of docs/desktop.md "Browser sign-in",
timeout and cancellation, two at once, and a real headless Chromium as the browser."""

from __future__ import annotations

import asyncio
import ctypes
import os
import select
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Emulator, as_another_user

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, PortalAuth, TotpRequiredResult


def loopback_environment(emu: Emulator, totp: bool = False) -> tuple[str, str]:
    """A new environment that allows a loopback redirect URL on a port of the test's own."""
    redirect = emu.loopback_redirect()
    environment_id = emu.environment(totp=totp)
    emu.call(
        "POST", "environments",
        {"id": environment_id, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
         "redirectUrls": [redirect], "totpRequired": totp, "accountAbstraction": False, "autoCreateWallet": True},
    )
    return environment_id, redirect


@pytest.fixture
def loopback(emu: Emulator) -> tuple[str, str]:
    """An environment that allows a loopback redirect URL on a port of this test's own."""
    return loopback_environment(emu)


@pytest.fixture
def browser_client(emu: Emulator, loopback: tuple[str, str]) -> Iterator[PortalAuth]:
    environment_id, redirect = loopback
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url) as auth:
        yield auth


class Browser:
    """An opener that behaves as a browser: in a thread of its own it loads the authorize URL
    and follows the provider's redirect to the listener; the page it ends on is kept."""

    def __init__(self, suffix: str = "") -> None:
        self.suffix = suffix
        self.calls: list[tuple[str, bool]] = []
        self.page: str | None = None
        self.status: int | None = None
        self.thread: threading.Thread | None = None

    def __call__(self, url: str, ephemeral: bool) -> None:
        self.calls.append((url, ephemeral))
        self.thread = threading.Thread(target=self._load, args=(url + self.suffix,))
        self.thread.start()

    def _load(self, url: str) -> None:
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                self.status, self.page = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            self.status, self.page = error.code, error.read().decode()

    def wait(self) -> str:
        assert self.thread is not None
        self.thread.join(60)
        assert self.page is not None
        return self.page


def test_sign_in_with_google(browser_client: PortalAuth, emu: Emulator) -> None:
    browser = Browser()
    browser_client.set_browser_opener(browser)
    result = browser_client.sign_in_with_google(timeout=-1)  # zero or less: the library's 300 s
    assert isinstance(result, AuthenticatedResult) and result.session.get_token()
    assert "/oauth/google/" in browser.calls[0][0] and browser.calls[0][1] is False
    page = browser.wait()  # the outcome, or (a callback that beat the opener's return) that it came
    assert browser.status == 200 and ("You are signed in" in page or "Sign-in received" in page)
    restored = browser_client.restore_session()
    assert restored is not None and restored.end_user_id == result.session.end_user_id


def test_sign_in_with_apple_passes_the_ephemeral_flag(browser_client: PortalAuth) -> None:
    browser = Browser()
    browser_client.set_browser_opener(browser)
    assert browser_client.prefers_ephemeral_web_browser_session is False
    browser_client.prefers_ephemeral_web_browser_session = True
    assert browser_client.prefers_ephemeral_web_browser_session is True
    assert isinstance(browser_client.sign_in_with_apple(), AuthenticatedResult)
    assert "/oauth/apple/" in browser.calls[0][0] and browser.calls[0][1] is True
    with pytest.raises(portal_auth.InvalidArgument):
        browser_client.prefers_ephemeral_web_browser_session = 1  # type: ignore[assignment]


def test_the_totp_branch(emu: Emulator) -> None:
    redirect = emu.loopback_redirect()
    environment_id = emu.environment()
    emu.call(
        "POST", "environments",
        {"id": environment_id, "allowedMethods": ["GOOGLE"], "redirectUrls": [redirect], "totpRequired": True,
         "accountAbstraction": False, "autoCreateWallet": True},
    )
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url) as auth:
        browser = Browser(suffix="&email=totp-browser%40example.com")
        auth.set_browser_opener(browser)
        step = auth.sign_in_with_google()
        assert isinstance(step, TotpRequiredResult) and step.totp_secret
        code = emu.totp_code(environment_id, "totp-browser@example.com")
        assert auth.verify_totp(code, step.user_jwt).session.end_user_id == step.end_user_id


def test_the_error_redirect(browser_client: PortalAuth) -> None:
    browser = Browser(suffix="&outcome=error")
    browser_client.set_browser_opener(browser)
    with pytest.raises(portal_auth.AuthenticationFailed) as raised:
        browser_client.sign_in_with_google()
    assert raised.value.error
    assert raised.value.error in browser.wait()  # the page shows the error too


def test_a_timeout_closes_the_sign_in_and_exchanges_nothing(browser_client: PortalAuth, emu: Emulator) -> None:
    opened: list[str] = []
    browser_client.set_browser_opener(lambda url, ephemeral: opened.append(url))
    with pytest.raises(portal_auth.SignInClosed) as raised:
        browser_client.sign_in_with_google(timeout=0.2)
    assert raised.value.code == "POPUP_CLOSED" and len(opened) == 1
    assert raised.value.reason is portal_auth.SignInClosedReason.SIGN_IN_TIMED_OUT
    assert emu.requests("/oauth/tokens") == []
    # The guard is released at once: the next sign-in starts.
    browser_client.set_browser_opener(Browser())
    assert isinstance(browser_client.sign_in_with_google(), AuthenticatedResult)


def test_cancelling_the_awaiting_task_closes_the_sign_in(emu: Emulator, loopback: tuple[str, str]) -> None:
    environment_id, redirect = loopback

    async def main() -> None:
        async with AsyncPortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url) as auth:
            opened = asyncio.Event()
            loop = asyncio.get_running_loop()
            await auth.set_browser_opener(lambda url, ephemeral: loop.call_soon_threadsafe(opened.set))
            task = asyncio.ensure_future(auth.sign_in_with_google())
            await opened.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The listener is gone and the guard released: a new sign-in binds the port again.
            auth.set_browser_opener(Browser())
            assert isinstance(await auth.sign_in_with_apple(), AuthenticatedResult)

    asyncio.run(main())
    assert len(emu.requests("/oauth/tokens")) == 1


def test_two_sign_ins_at_once(browser_client: PortalAuth, emu: Emulator) -> None:
    release = threading.Event()
    opened = threading.Event()
    browser = Browser()

    def slow_browser(url: str, ephemeral: bool) -> None:
        opened.set()
        threading.Thread(target=lambda: (release.wait(60), browser(url, ephemeral))).start()

    browser_client.set_browser_opener(slow_browser)
    outcome: list[object] = []
    first = threading.Thread(target=lambda: outcome.append(browser_client.sign_in_with_google()))
    first.start()
    assert opened.wait(60)
    requests_before = len(emu.requests("/oauth/urls"))
    with pytest.raises(portal_auth.SignInInProgress):
        browser_client.sign_in_with_apple()
    assert len(emu.requests("/oauth/urls")) == requests_before  # refused before any request
    release.set()
    first.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], AuthenticatedResult)


def test_unavailable_before_any_request(emu: Emulator, loopback: tuple[str, str], env: str) -> None:
    environment_id, redirect = loopback
    # Not a loopback redirect URL.
    with PortalAuth(auth_environment_id=env, redirect_url="myapp://auth/callback", api_host=emu.url) as auth:
        auth.set_browser_opener(Browser())
        with pytest.raises(portal_auth.SignInUnavailable) as raised:
            auth.sign_in_with_google()
        assert raised.value.reason is portal_auth.SignInUnavailableReason.REDIRECT_NOT_LOOPBACK
    # The port is in use.
    port = int(redirect.split(":")[2].split("/")[0])
    with socket.socket() as taken, PortalAuth(
        auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url
    ) as auth:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        auth.set_browser_opener(Browser())
        with pytest.raises(portal_auth.SignInUnavailable) as raised:
            auth.sign_in_with_google()
        assert raised.value.reason is portal_auth.SignInUnavailableReason.PORT_IN_USE
        assert f"127.0.0.1:{port}: the port is in use" in str(raised.value)
    assert emu.requests("/oauth/urls") == []


def test_a_failing_opener_is_unavailable(browser_client: PortalAuth) -> None:
    def broken(url: str, ephemeral: bool) -> None:
        raise OSError(f"no browser for {url}")

    browser_client.set_browser_opener(broken)
    with pytest.raises(portal_auth.SignInUnavailable) as raised:
        browser_client.sign_in_with_google()
    assert raised.value.reason is portal_auth.SignInUnavailableReason.OPENER_FAILED
    assert "/oauth/" not in str(raised.value)


def test_no_browser_to_start_is_its_own_reason(
    browser_client: PortalAuth, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The default opener, with neither $BROWSER nor xdg-open to run."""
    monkeypatch.setenv("BROWSER", str(tmp_path / "no-such-browser"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(portal_auth.SignInUnavailable) as raised:
        browser_client.sign_in_with_google()
    assert raised.value.reason is portal_auth.SignInUnavailableReason.NO_BROWSER
    assert "set $BROWSER or install xdg-utils" in str(raised.value)


def test_invalid_timeouts(browser_client: PortalAuth) -> None:
    # Only what the C ABI's int32 of milliseconds cannot hold; zero or less is the library's.
    for timeout in (float("nan"), 1e10, -1e10, "5", True):
        with pytest.raises(portal_auth.InvalidArgument) as raised:
            browser_client.sign_in_with_google(timeout=timeout)  # type: ignore[arg-type]
        assert raised.value.name == "timeout"
    with pytest.raises(portal_auth.InvalidArgument):
        browser_client.set_browser_opener("firefox")  # type: ignore[arg-type]


def test_the_default_opener_runs_browser(
    browser_client: PortalAuth, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no opener installed, $BROWSER is run with the URL (here a script that loads it)."""
    script = tmp_path / "browser"
    script.write_text(
        f"#!{sys.executable}\nimport sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=30).read()\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))
    browser_client.set_browser_opener(Browser())
    browser_client.set_browser_opener(None)  # back to the default
    assert isinstance(browser_client.sign_in_with_google(), AuthenticatedResult)


def chromium(url: str, ephemeral: bool, profile: Path) -> Callable[[], subprocess.CompletedProcess[str]]:
    """Debian's Chromium, headless, loading `url` as a user's browser would; in a PID
    namespace of its own, so that none of its processes outlives it."""
    command = [
        "unshare", "--pid", "--fork", "--kill-child", "--mount-proc",
        "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
        *(["--incognito"] if ephemeral else []), "--dump-dom", url,
    ]
    if os.geteuid() != 0:
        command[1:1] = ["--map-root-user"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return lambda: subprocess.CompletedProcess(command, process.wait(120), process.stdout.read() if process.stdout else "")


def test_with_a_real_headless_chromium(browser_client: PortalAuth, tmp_path: Path) -> None:
    finished: list[Callable[[], subprocess.CompletedProcess[str]]] = []
    browser_client.set_browser_opener(lambda url, ephemeral: finished.append(chromium(url, ephemeral, tmp_path)))
    browser_client.prefers_ephemeral_web_browser_session = True
    result = browser_client.sign_in_with_google()
    assert isinstance(result, AuthenticatedResult) and result.session.get_token()
    page = finished[0]()
    assert page.returncode == 0 and "<html" in page.stdout.lower()


def test_closing_the_client_ends_its_sign_in(emu: Emulator, loopback: tuple[str, str]) -> None:
    environment_id, redirect = loopback
    auth = PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url)
    opened = threading.Event()
    auth.set_browser_opener(lambda url, ephemeral: opened.set())
    outcome: list[BaseException] = []

    def sign_in() -> None:
        try:
            auth.sign_in_with_google()
        except BaseException as error:  # noqa: BLE001
            outcome.append(error)

    waiting = threading.Thread(target=sign_in)
    waiting.start()
    assert opened.wait(60)
    auth.close()
    waiting.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], portal_auth.SignInClosed)
    assert outcome[0].reason is portal_auth.SignInClosedReason.CLIENT_CLOSED
    # The port is free again for another client.
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url) as again:
        again.set_browser_opener(Browser())
        assert isinstance(again.sign_in_with_google(), AuthenticatedResult)


def test_an_opener_raising_beyond_exception_is_unavailable(browser_client: PortalAuth) -> None:
    def leaving(url: str, ephemeral: bool) -> None:
        raise SystemExit(1)

    browser_client.set_browser_opener(leaving)
    with pytest.raises(portal_auth.SignInUnavailable) as raised:
        browser_client.sign_in_with_google(timeout=60)
    assert raised.value.reason is portal_auth.SignInUnavailableReason.OPENER_FAILED


def test_a_listener_out_of_descriptors_still_serves_the_browser(emu: Emulator, loopback: tuple[str, str]) -> None:
    """The app's process may run out of file descriptors while local clients hold the
    listener's connections open: the oldest is given up for the newest, so the browser's
    request is served before those idle connections' own 10 s read deadline would free any
    (the sign-in's 9 s start before theirs)."""
    environment_id, redirect = loopback
    program = (
        "import os, resource, sys\n"
        "from portal_auth import PortalAuth\n"
        "auth = PortalAuth(auth_environment_id=sys.argv[1], redirect_url=sys.argv[2], api_host=sys.argv[3],\n"
        "                  storage='memory')\n"
        "auth.get_methods()  # the library loaded and its connection to the emulator open\n"
        "auth.set_browser_opener(lambda url, ephemeral: print(url, flush=True))\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "# Room for the listener's socket and a few connections, no more.\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir('/proc/self/fd')) + 4, hard))\n"
        "print(type(auth.sign_in_with_google(timeout=9)).__name__, flush=True)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", program, environment_id, redirect, emu.url], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    url = child.stdout.readline().strip()
    port = int(redirect.split(":")[2].split("/")[0])
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(12)]
    try:
        browser = Browser()
        browser(url, False)
        assert child.stdout.readline().strip() == "AuthenticatedResult"
        assert browser.wait()
    finally:
        for connection in idle:
            connection.close()
        assert child.wait(60) == 0


def native_thread_name() -> bytes:
    """The calling thread's name as the kernel knows it (prctl PR_GET_NAME)."""
    name = ctypes.create_string_buffer(16)
    ctypes.CDLL(None, use_errno=True).prctl(16, name, 0, 0, 0)
    return name.value


def test_an_opener_may_call_the_library_and_wait(browser_client: PortalAuth) -> None:
    """The opener runs on a thread of its own, never the library's I/O thread: a blocking
    call of the library inside it completes."""
    seen: list[object] = []
    browser = Browser()

    def opener(url: str, ephemeral: bool) -> None:
        seen.append(native_thread_name())
        seen.append(browser_client.get_methods())
        browser(url, ephemeral)

    browser_client.set_browser_opener(opener)
    outcome: list[object] = []
    signing_in = threading.Thread(target=lambda: outcome.append(browser_client.sign_in_with_google(timeout=60)))
    signing_in.start()
    signing_in.join(90)
    assert not signing_in.is_alive(), "the opener's call of the library never completed"
    assert seen[0] != b"portal-auth-io"
    assert isinstance(seen[1], portal_auth.AuthMethodsResult)
    assert len(outcome) == 1 and isinstance(outcome[0], AuthenticatedResult)


def test_a_slow_opener_delays_only_its_own_sign_in(
    browser_client: PortalAuth, emu: Emulator, loopback: tuple[str, str]
) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(url: str, ephemeral: bool) -> None:
        started.set()
        release.wait(60)
        raise OSError("gave up")

    browser_client.set_browser_opener(slow)
    outcome: list[BaseException] = []

    def sign_in() -> None:
        try:
            browser_client.sign_in_with_google(timeout=60)
        except BaseException as error:  # noqa: BLE001
            outcome.append(error)

    signing_in = threading.Thread(target=sign_in)
    signing_in.start()
    try:
        assert started.wait(60)
        # Another client's call completes while the opener still runs.
        other_done: list[object] = []
        with PortalAuth(auth_environment_id=loopback[0], redirect_url=loopback[1], api_host=emu.url) as other:
            call = threading.Thread(target=lambda: other_done.append(other.get_methods()))
            call.start()
            call.join(30)
            assert other_done, "another client's call waited for the opener"
    finally:
        release.set()
        signing_in.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], portal_auth.SignInUnavailable)


def test_the_browser_inherits_no_descriptor(
    browser_client: PortalAuth, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$BROWSER here is a script that lists its open descriptors into a FIFO: 0, 1 (the FIFO)
    and 2, and the one ls opens for the listing (3), whatever the process had open (the
    library's connection to the API, the listener's sockets, a pipe of the host's that is
    not close-on-exec)."""
    browser_client.get_methods()  # a kept-alive connection to the emulator
    script = tmp_path / "browser"
    listing = tmp_path / "browser.fds"
    script.write_text('#!/bin/sh\nexec ls /proc/self/fd > "$0.fds"\n')
    script.chmod(0o755)
    os.mkfifo(listing)
    reader = os.open(listing, os.O_RDONLY | os.O_NONBLOCK)  # so the browser never waits for one
    monkeypatch.setenv("BROWSER", str(script))
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, True)
    os.set_inheritable(write_end, True)
    try:
        # The opener runs to its end whatever the timeout; the listener then stops at once.
        with pytest.raises(portal_auth.SignInClosed):
            browser_client.sign_in_with_google(timeout=0.5)
        text = b""
        while select.select([reader], [], [], 60)[0]:
            chunk = os.read(reader, 4096)
            if not chunk:
                break
            text += chunk
    finally:
        for fd in (reader, read_end, write_end):
            os.close(fd)
    assert sorted(int(fd) for fd in text.split()) == [0, 1, 2, 3]


def test_a_sign_in_calls_the_opener_installed_when_it_was_called(browser_client: PortalAuth, emu: Emulator) -> None:
    """The opener installed when the sign-in is called is the one it calls, though another is
    installed before the library gets to it: the sign-in keeps it (a lambda nothing else
    holds); the opener installed after the call is never called."""
    emu.fault("/oauth/urls", "hold")
    browser, later = Browser(), Browser()
    browser_client.set_browser_opener(lambda url, ephemeral: browser(url, ephemeral))
    outcome: list[object] = []
    signing_in = threading.Thread(target=lambda: outcome.append(browser_client.sign_in_with_google(timeout=60)))
    signing_in.start()
    try:
        emu.wait("/oauth/urls", 1)
        browser_client.set_browser_opener(later)
    finally:
        emu.call("POST", "release")
        signing_in.join(90)
    assert len(outcome) == 1 and isinstance(outcome[0], AuthenticatedResult)
    assert len(browser.calls) == 1 and later.calls == []


# A sign-in in a process of its own that prints "opened" once its listener waits, ends its
# wait when its standard input ends, then prints how the sign-in ended; its log to stderr.
_SIGN_IN_UNTIL_STDIN_ENDS = """
import logging, sys, threading
import portal_auth
logging.basicConfig(stream=sys.stderr, level=logging.DEBUG, format="%(message)s")
environment_id, redirect, api_host = sys.argv[1:4]
with portal_auth.PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=api_host,
                            storage="memory") as auth:
    auth.set_browser_opener(lambda url, ephemeral: print("opened", flush=True))
    threading.Thread(target=lambda: (sys.stdin.read(), auth.close()), daemon=True).start()
    try:
        auth.sign_in_with_google()
        print("signed in")
    except portal_auth.SignInClosed as closed:
        print("closed", closed.reason.name)
"""


def test_as_the_overflow_uid_of_a_user_namespace_no_connection_is_taken_for_this_users(
    emu: Emulator, loopback: tuple[str, str]
) -> None:
    """An application under `unshare -U` that maps its user to 65534, the overflow uid: every
    user the namespace does not map reads as that uid too, so another user's connection
    cannot be told from the user's own. The listener serves neither, and its log says why."""
    environment_id, redirect = loopback
    namespace = ["unshare", "--user", "--map-user=65534"]
    child = subprocess.Popen([*namespace, sys.executable, "-c", _SIGN_IN_UNTIL_STDIN_ENDS, environment_id, redirect, emu.url],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "opened\n"
    # Another user's request would end the wait; its connection is closed unread (curl's
    # 000; exit 52, closed, or 56, reset).
    other = as_another_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
                            redirect + "?error=access_denied")
    output, log = child.communicate("", timeout=60)
    assert (other.stdout, other.returncode in (52, 56)) == ("000", True), other.stderr
    assert output == "closed CLIENT_CLOSED\n"
    assert "this process runs as uid 65534, the overflow uid" in log
