"""A Flatpak-like sandbox, as Flatpak builds one, from Debian's bubblewrap, xdg-dbus-proxy
and xdg-desktop-portal, on the private session bus the tests run in:

- `/.flatpak-info` names the application; `FLATPAK_ID` and the XDG folders are the app's own
  (`~/.var/app/<id>/...`), and `$XDG_RUNTIME_DIR` holds only `app/<id>` and `bus`;
- `bus` is an xdg-dbus-proxy that lets the sandbox talk to `org.freedesktop.portal.Desktop`
  alone (no Secret Service), itself run in a sandbox with the same `/.flatpak-info`, since
  the portal tells apps apart by the `/.flatpak-info` of the process that calls it;
- xdg-desktop-portal runs on the bus with `XDG_CURRENT_DESKTOP=GNOME`, which chooses
  gnome-keyring's Secret portal backend.

The host's folders are visible read-write, each bound on a root of the sandbox's own (so
that `/.flatpak-info` is made there, never on the host): what is under test is what the app
reaches through the bus and its environment, not the file system's confinement."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

PORTAL = "/usr/libexec/xdg-desktop-portal"
BOUND_SECONDS = 20   # every wait for a daemon is bounded by this


def host_root() -> list[str]:
    """bwrap's arguments for a root of its own that shows each of the host's top-level
    entries (a symlink as a symlink), /dev and /proc included."""
    arguments = ["--tmpfs", "/"]
    for entry in sorted(os.listdir("/")):
        path = "/" + entry
        if os.path.islink(path):
            arguments += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            arguments += ["--dev-bind", path, path]
    return arguments


def bus_has_owner(name: str) -> bool:
    ran = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                          "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", name],
                         capture_output=True, text=True, timeout=BOUND_SECONDS)
    return ran.returncode == 0 and "true" in ran.stdout


@contextmanager
def desktop_portal(desktop: str = "GNOME") -> Iterator[None]:
    """xdg-desktop-portal on the session bus, for `desktop`'s backends."""
    assert not bus_has_owner("org.freedesktop.portal.Desktop"), "a portal already runs on the test's bus"
    portal = subprocess.Popen([PORTAL, "--replace"], env={**os.environ, "XDG_CURRENT_DESKTOP": desktop},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # `gdbus wait` returns once the name has an owner: no polling.
        subprocess.run(["gdbus", "wait", "--session", "--timeout", str(BOUND_SECONDS), "org.freedesktop.portal.Desktop"],
                       check=True, timeout=BOUND_SECONDS + 5)
        yield
    finally:
        portal.terminate()
        portal.wait(timeout=BOUND_SECONDS)


class Sandbox:
    """The sandbox of one application id, under `home` (the user's home folder)."""

    def __init__(self, app_id: str, home: Path, talk: Sequence[str] = ("org.freedesktop.portal.Desktop",),
                 path: str | None = None, bus: bool = True) -> None:
        self.app_id = app_id
        self.home = home
        self.app_home = home / ".var" / "app" / app_id
        self.runtime = Path(os.environ["XDG_RUNTIME_DIR"])
        self.app_runtime = self.runtime / "app" / app_id
        # Short: the proxy's socket is in it, and a socket's path holds 107 bytes at most.
        self.host_side = Path(tempfile.mkdtemp(prefix="sandbox-"))
        self.talk = talk
        self.path = path   # the sandbox's PATH, when not the host's
        self.bus = bus     # False: no session bus in the sandbox at all
        self._proxy: subprocess.Popen[bytes] | None = None
        self._proxy_ready: int | None = None

    @property
    def data_home(self) -> Path:
        return self.app_home / "data"

    @property
    def keyring_file(self) -> Path:
        """Where libsecret's file backend keeps the app's items."""
        return self.data_home / "keyrings" / "default.keyring"

    def __enter__(self) -> Sandbox:
        for folder in (self.data_home, self.app_home / "config", self.app_home / "cache", self.app_home / ".local" / "state",
                       self.app_runtime, self.host_side):
            folder.mkdir(parents=True, exist_ok=True)
            folder.chmod(0o700)
        self.info = self.host_side / "flatpak-info"
        self.info.write_text(f"[Application]\nname={self.app_id}\nruntime=runtime/org.example.Platform/x86_64/1\n")
        self.proxy_socket = self.host_side / "bus"
        ready_read, ready_write = os.pipe()
        policy = ["--filter", *(f"--talk={name}" for name in self.talk)]
        self._proxy = subprocess.Popen(
            ["bwrap", *host_root(), "--ro-bind", str(self.info), "/.flatpak-info", "--die-with-parent",
             "xdg-dbus-proxy", f"--fd={ready_write}", os.environ["DBUS_SESSION_BUS_ADDRESS"], str(self.proxy_socket),
             *policy],
            pass_fds=(ready_write,))
        os.close(ready_write)
        self._proxy_ready = ready_read
        # The proxy writes a byte once it listens (as Flatpak waits for it).
        assert os.read(ready_read, 1), "xdg-dbus-proxy ended before it listened"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proxy_ready is not None:
            os.close(self._proxy_ready)   # the proxy stops when this end closes
        if self._proxy is not None:
            self._proxy.wait(timeout=BOUND_SECONDS)
        shutil.rmtree(self.host_side, ignore_errors=True)

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` as a command that runs it inside the sandbox."""
        runtime = str(self.runtime)
        return [
            "bwrap", *host_root(), "--ro-bind", str(self.info), "/.flatpak-info",
            "--perms", "0700", "--tmpfs", runtime,
            "--bind", str(self.app_runtime), f"{runtime}/app/{self.app_id}",
            *(["--bind", str(self.proxy_socket), f"{runtime}/bus",
                "--setenv", "DBUS_SESSION_BUS_ADDRESS", f"unix:path={runtime}/bus"] if self.bus
              else ["--unsetenv", "DBUS_SESSION_BUS_ADDRESS"]),
            "--setenv", "FLATPAK_ID", self.app_id,
            "--setenv", "XDG_DATA_HOME", str(self.data_home),
            "--setenv", "XDG_CONFIG_HOME", str(self.app_home / "config"),
            "--setenv", "XDG_CACHE_HOME", str(self.app_home / "cache"),
            "--setenv", "XDG_STATE_HOME", str(self.app_home / ".local" / "state"),
            "--unsetenv", "BROWSER", *(["--setenv", "PATH", self.path] if self.path else []),
            "--die-with-parent", *argv,
        ]

    def run(self, argv: Sequence[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(argv), capture_output=True, text=True, timeout=timeout)


def have_sandbox_tools() -> bool:
    return all(shutil.which(tool) for tool in ("bwrap", "xdg-dbus-proxy", "gdbus")) and os.access(PORTAL, os.X_OK)
