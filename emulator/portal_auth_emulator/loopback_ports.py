"""Loopback ports for a test's own listener (a sign-in's redirect URL), which every test
that talks to the emulator asks for through /_emulator/loopback-port."""

import random
import socket
import threading

# Below the kernel's ephemeral range (32768 and up): a port bind(0) gave could be taken by an
# outgoing connection (the library's, to this emulator) before the test's sign-in binds it.
PORTS = range(20_000, 32_000)


class LoopbackPorts:
    """Hands out ports of `ports` that nobody has bound on 127.0.0.1 at the time, each call
    the ones after the last call's, so that callers at the same time never get the same one."""

    def __init__(self, ports: range = PORTS, start: int | None = None) -> None:
        self._ports = ports
        # Each emulator starts at a place of its own (`start`, an index into `ports`), so that
        # two on one machine rarely meet.
        self._next = random.randrange(len(ports)) if start is None else start % len(ports)
        self._lock = threading.Lock()

    @property
    def ports(self) -> range:
        return self._ports

    def take(self) -> int | None:
        """The next port that binds on 127.0.0.1 now; None when none of them does."""
        with self._lock:
            for _ in self._ports:
                port = self._ports[self._next]
                self._next = (self._next + 1) % len(self._ports)
                if _bindable(port):
                    return port
        return None


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
