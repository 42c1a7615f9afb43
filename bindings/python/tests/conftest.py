"""Fixtures of the binding's tests: one emulator for the session (started through its console
script, on loopback, stopped at the end), a fresh environment of its own for every test (so
that keyring entries never meet), and the emulator's control endpoints."""

from __future__ import annotations

import json
import logging
import os
import select
import struct
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CALLBACK = "myapp://auth/callback"
FROM_EMAIL = "hello@auth.example.com"
TEMPLATE_ID = "tmpl"


@dataclass
class Emulator:
    url: str

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + "/_emulator/" + path, data=data, method=method)
        request.add_header("content-type", "application/json")
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def environment(self, totp: bool = True, methods: list[str] | None = None, **extra: Any) -> str:
        """A new environment, its id unique to the caller."""
        environment_id = f"env-{uuid.uuid4().hex[:12]}"
        self.call(
            "POST",
            "environments",
            {
                "id": environment_id,
                "allowedMethods": methods or ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
                "redirectUrls": [CALLBACK, "http://127.0.0.1:8765/callback"],
                "totpRequired": totp,
                "accountAbstraction": extra.get("accountAbstraction", False),
                "autoCreateWallet": extra.get("autoCreateWallet", True),
            },
        )
        return environment_id

    def grant_redirect(self, environment_id: str, email: str, **extra: Any) -> str:
        """A magic-link redirect URL with a fresh grant, as the user's email would carry."""
        token = self.call("POST", "grants", {"environmentId": environment_id, "email": email, "kind": "magic", **extra})
        return f"{CALLBACK}?token={urllib.parse.quote(token['token'])}&authMethod=EMAIL_MAGIC_LINK"

    def outbox_link(self, email: str) -> str:
        messages = self.call("GET", "outbox?email=" + urllib.parse.quote(email))["messages"]
        return str(messages[-1]["link"])

    def loopback_redirect(self) -> str:
        """A loopback redirect URL on a port nobody listens on now, which the emulator hands out."""
        return f"http://127.0.0.1:{self.call('GET', 'loopback-port')['port']}/callback"

    def totp_code(self, environment_id: str, email: str) -> str:
        query = urllib.parse.urlencode({"environmentId": environment_id, "email": email})
        return str(self.call("GET", "totp?" + query)["code"])

    def requests(self, path_suffix: str) -> list[dict[str, Any]]:
        """The requests made to paths ending in `path_suffix`."""
        logged = self.call("GET", "requests")["requests"]
        return [request for request in logged if request["path"].endswith(path_suffix)]

    def fault(self, path: str, kind: str, **fields: Any) -> None:
        self.call("POST", "faults", {"path": path, "kind": kind, **fields})

    def wait(self, path: str, count: int) -> None:
        self.call("GET", f"wait?path={urllib.parse.quote(path)}&count={count}&timeout=30")


@pytest.fixture(scope="session", autouse=True)
def log_audit() -> Iterator[None]:
    """With PORTAL_AUTH_TEST_LOG_FILE set, every line the library logs during the session, at
    every level, is appended there as `python<TAB>LEVEL<TAB>message` for scripts/log-audit.py."""
    path = os.environ.get("PORTAL_AUTH_TEST_LOG_FILE")
    if not path:
        yield
        return
    logger = logging.getLogger("portal_auth")
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter("python\t%(levelname)s\t%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    # The console script pip installed beside this interpreter, as a user would run it.
    script = shutil.which("portal-auth-emulator", path=os.path.dirname(sys.executable))
    assert script is not None, "the portal-auth-emulator console script is not installed"
    process = subprocess.Popen(
        [script, "--port", "0", "--stop-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdin is not None
    line = process.stdout.readline()
    assert line.startswith("portal-auth-emulator listening on "), line
    try:
        yield Emulator(line.split()[-1])
    finally:
        process.stdin.close()
        process.wait(timeout=30)


@pytest.fixture
def emu(emulator: Emulator) -> Iterator[Emulator]:
    """The emulator with no faults or logged requests left by an earlier test."""
    emulator.call("DELETE", "faults")
    emulator.call("DELETE", "requests")
    yield emulator
    emulator.call("DELETE", "faults")


@pytest.fixture
def env(emu: Emulator) -> str:
    """An environment of this test's own (TOTP on)."""
    return emu.environment()


@pytest.fixture
def keyring() -> str:
    """The private keyring's control script; the test is skipped outside one."""
    script = os.environ.get("PORTAL_AUTH_PRIVATE_KEYRING")
    if not script:
        pytest.skip("needs a private keyring: run inside scripts/private-keyring.sh run")
    return script


class SecretServiceCalls:
    """The method calls made to the Secret Service on the private session bus, as
    `dbus-monitor` sees them, counted as `Interface.Member` (for example
    "org.freedesktop.Secret.Service.SearchItems", "org.freedesktop.Secret.Item.Delete")."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["dbus-monitor", "--session", "type='method_call',destination='org.freedesktop.secrets'"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self._pending = b""
        # A monitor acquires, then gives up, a name of its own: after that it sees everything.
        self._read_until("member=NameLost")

    def _read_until(self, marker: str) -> list[str]:
        """The lines up to the first one holding `marker`, that one included."""
        assert self.process.stdout is not None
        lines: list[str] = []
        while not lines or marker not in lines[-1]:
            if b"\n" not in self._pending:
                ready, _, _ = select.select([self.process.stdout], [], [], 60)
                chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
                assert chunk, f"dbus-monitor stopped before {marker!r}"
                self._pending += chunk
                continue
            line, self._pending = self._pending.split(b"\n", 1)
            lines.append(line.decode(errors="replace"))
        return lines

    def counted(self) -> dict[str, int]:
        """The calls since the last count: a Ping of the service's own comes after them."""
        subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
             "org.freedesktop.DBus.Peer.Ping"],
            check=True, stdout=subprocess.DEVNULL, timeout=60,
        )
        counts: dict[str, int] = {}
        for line in self._read_until("member=Ping")[:-1]:
            if line.startswith("method call "):
                fields = dict(part.split("=", 1) for part in line.replace(";", "").split() if "=" in part)
                name = f"{fields.get('interface', '')}.{fields.get('member', '')}"
                counts[name] = counts.get(name, 0) + 1
        return counts

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=60)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def secret_service_calls(keyring: str) -> Iterator[SecretServiceCalls]:
    monitor = SecretServiceCalls()
    try:
        yield monitor
    finally:
        monitor.close()


def store_in_keyring(environment_id: str, value: bytes) -> None:
    """An entry for `environment_id` written by another tool, as the library would find it."""
    subprocess.run(
        ["secret-tool", "store", "--label=written by another tool", "xdg:schema", "io.portalhq.auth.Session",
         "auth_environment_id", environment_id],
        input=value, check=True, timeout=60,
    )


def keyring_entry(environment_id: str) -> bytes | None:
    found = subprocess.run(["secret-tool", "lookup", "auth_environment_id", environment_id], capture_output=True, timeout=60)
    return found.stdout if found.returncode == 0 else None


@pytest.fixture
def make_client(emu: Emulator) -> Iterator[Any]:
    """Builds PortalAuth clients on the emulator (keyring storage unless told otherwise) and
    closes them after the test."""
    import portal_auth

    made: list[portal_auth.PortalAuth] = []

    def make(environment_id: str, **options: Any) -> portal_auth.PortalAuth:
        options.setdefault("magic_link", portal_auth.MagicLinkConfig(from_email=FROM_EMAIL, template_id=TEMPLATE_ID))
        client = portal_auth.PortalAuth(
            auth_environment_id=environment_id, redirect_url=CALLBACK, api_host=emu.url, **options
        )
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


class Interaction:
    """A program driven through its standard input, the way a user answers its questions:
    each answer is sent once the program has asked (its prompt has appeared). It starts with
    Ctrl-C at its default, as from a terminal, whatever this test run inherited: a shell's
    background job ignores SIGINT, and Python then installs no KeyboardInterrupt handler."""

    def __init__(self, *command: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            ["/usr/bin/env", "--default-signal=INT", *command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
        )
        self.output = b""

    def expect(self, prompt: str) -> str:
        """Reads until `prompt` has appeared; returns the output so far."""
        assert self.process.stdout is not None
        while prompt.encode() not in self.output:
            ready, _, _ = select.select([self.process.stdout], [], [], 60)
            chunk = os.read(self.process.stdout.fileno(), 4096) if ready else b""
            if not chunk:
                raise AssertionError(f"{prompt!r} never came; the output was:\n{self.output.decode(errors='replace')}")
            self.output += chunk
        return self.output.decode()

    def answer(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def finish(self) -> tuple[int, str]:
        """Closes stdin and waits: the exit status and the whole output."""
        rest, _ = self.process.communicate(timeout=60)
        self.output += rest
        return self.process.returncode, self.output.decode()


# QR codes, read back as a phone would: zbarimg on an image.


def decode(image: Path) -> str:
    scanned = subprocess.run(
        ["zbarimg", "--raw", "-q", "-Sbinary", str(image)], capture_output=True, timeout=60, check=True
    )
    return scanned.stdout.decode("utf-8")


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def grey_png(rows: list[list[int]]) -> bytes:
    """An 8-bit greyscale PNG of `rows` (0 black, 255 white), written with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", len(rows[0]), len(rows), 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def rasterise(text: str, dark_on_light: bool, pixels: int = 4) -> list[list[int]]:
    """The terminal text as a screen shows it: each character one module wide and two high,
    the glyph in the text colour, the rest in the background colour."""
    glyph, background = (0, 255) if dark_on_light else (255, 0)
    halves = {" ": (False, False), "▀": (True, False), "▄": (False, True), "█": (True, True)}
    rows: list[list[int]] = []
    for line in text.splitlines():
        for half in (0, 1):
            row = [glyph if halves[character][half] else background for character in line for _ in range(pixels)]
            rows.extend([row] * pixels)
    return rows


def as_another_user(*command: str) -> subprocess.CompletedProcess[str]:
    """`command` run as a second local user (nobody), through setpriv (with sudo unless root)."""
    setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(setpriv if os.getuid() == 0 else ["sudo", "-n", *setpriv],
                          capture_output=True, text=True, timeout=60, check=False)
