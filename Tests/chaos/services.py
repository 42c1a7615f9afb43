"""The services a chaos trial strikes: the Portal emulator on loopback and the private
keyring's daemon (scripts/private-keyring.sh, which the trial runs inside). Each can be
killed and started again, or held (SIGSTOP) and let go (SIGCONT). A restart does not block
the trial: `recovered()` says when the service serves again."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

ENVIRONMENT = "env-chaos"
CALLBACK = "myapp://auth/callback"
# Every wait for a service to come up is bounded by this.
START_SECONDS = 20.0


class Emulator:
    """The emulator as its own process, started again on the same port after a kill (the
    trial runs in a network namespace of its own, where nothing else can take the port)."""

    def __init__(self, folder: Path) -> None:
        self.config = folder / "emulator.json"
        self.config.write_text(json.dumps({"environments": [{
            "id": ENVIRONMENT, "allowedMethods": ["EMAIL_MAGIC_LINK"], "redirectUrls": [CALLBACK],
            "totpRequired": False, "accountAbstraction": False, "autoCreateWallet": False,
        }]}))
        self.log = (folder / "emulator.log").open("ab")
        self.port = 0
        self.held = False
        self.process = self._spawn()
        if not self.recovered(START_SECONDS):
            raise RuntimeError("the emulator did not start")
        self.url = f"http://127.0.0.1:{self.port}"

    def _spawn(self) -> subprocess.Popen[bytes]:
        # Its stdin stays open: were the trial to die, the emulator ends with it.
        return subprocess.Popen(
            [sys.executable, "-m", "portal_auth_emulator", "--port", str(self.port), "--config", str(self.config),
             "--stop-on-stdin-eof"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
        )

    def recovered(self, wait: float = 0.0) -> bool:
        """Whether it listens: its first line came (waiting up to `wait` seconds for it)."""
        assert self.process.stdout is not None
        if self.process.poll() is not None:   # killed, not started again yet
            return False
        if self.port and self.process.stdout.closed:
            return True
        ready, _, _ = select.select([self.process.stdout], [], [], wait)
        if not ready:
            return False
        line = self.process.stdout.readline().decode()
        if not line.startswith("portal-auth-emulator listening on "):
            raise RuntimeError(f"the emulator did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])
        self.process.stdout.close()
        return True

    def kill(self) -> bool:
        self.process.kill()
        self.process.wait()
        return True

    def restart(self) -> None:
        self.close()
        self.process = self._spawn()

    def hold(self) -> bool:
        self.process.send_signal(signal.SIGSTOP)
        self.held = True
        return True

    def release(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.held = False

    def close(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
        self.process.kill()
        self.process.wait()


class Keyring:
    """The private keyring's daemon: scripts/private-keyring.sh's `start` makes a new one
    (the login keyring it reopens is on disk)."""

    def __init__(self) -> None:
        script = os.environ.get("PORTAL_AUTH_PRIVATE_KEYRING")
        if not script:
            raise RuntimeError("a keyring trial runs inside scripts/private-keyring.sh run")
        self.script = script
        self.starting: subprocess.Popen[bytes] | None = None
        self.down = False
        self.held_pid: int | None = None

    @staticmethod
    def pid() -> int | None:
        """The daemon's process, as the bus knows it; None when none owns the name."""
        answer = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--reply-timeout=5000", "--dest=org.freedesktop.DBus",
             "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
             "string:org.freedesktop.secrets"],
            capture_output=True, text=True, timeout=START_SECONDS,
        )
        words = answer.stdout.split()
        return int(words[-1]) if answer.returncode == 0 and "uint32" in words else None

    def kill(self) -> bool:
        pid = self.pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGKILL)
        self.down = True
        return True

    def restart(self) -> None:
        self.starting = subprocess.Popen([self.script, "start"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def recovered(self, wait: float = 0.0) -> bool:
        if self.starting is None:
            return not self.down
        try:
            status = self.starting.wait(wait) if wait else self.starting.poll()
        except subprocess.TimeoutExpired:
            return False
        if status is None:
            return False
        self.starting = None
        if status != 0:
            raise RuntimeError(f"the keyring daemon did not start again (status {status})")
        self.down = False
        return True

    @property
    def held(self) -> bool:
        return self.held_pid is not None

    def hold(self) -> bool:
        self.held_pid = self.pid()
        if self.held_pid is not None:
            os.kill(self.held_pid, signal.SIGSTOP)
        return self.held

    def release(self) -> None:
        if self.held_pid is not None:
            os.kill(self.held_pid, signal.SIGCONT)
            self.held_pid = None
