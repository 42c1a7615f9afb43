#!/usr/bin/env python3
"""Another local user's connect flood on a loopback listener, as the tests and `make bench`
run it (as `nobody`, through setpriv): SOCKETS open TCP sockets of its own on loopback (half
of them connections to a listener of its own, half their accepted ends), which every lookup
of the kernel's whole socket table must go through, and LOOPS processes that connect to
127.0.0.1:PORT and close, over and over.

    connect-flood.py PORT SOCKETS LOOPS

Prints "flooding" once the sockets are open and every loop has had a connection accepted
(the flood is on), then floods until its standard input ends; then stops its loops and exits."""

import ctypes
import os
import resource
import signal
import socket
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


def hold_sockets(count: int) -> list[socket.socket]:
    """`count` open sockets: connections to a listener of this process's own, and their
    accepted ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    held = [listener]
    for _ in range(count // 2):
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        held += [client, accepted]
    return held


def connect_loop(port: int, started: int) -> None:
    """Connects and closes until killed; writes a byte to `started` once the first connect
    went through."""
    first = True
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port)):
                pass
        except OSError:
            continue
        if first:
            os.write(started, b".")
            os.close(started)
            first = False


def child(started_read: int, started_write: int, work: Callable[[], None]) -> int:
    """Forks a process that does `work` until killed, and ends with this one."""
    pid = os.fork()
    if pid == 0:
        os.close(started_read)
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        work()
    return pid


def main() -> None:
    port, sockets, loops = (int(argument) for argument in sys.argv[1:4])
    started_read, started_write = os.pipe()
    children = []

    def holder(count: int) -> None:
        # held for as long as the process lives
        held = hold_sockets(count)  # noqa: F841
        os.write(started_write, b".")
        os.close(started_write)
        signal.pause()

    # A process holds as many descriptors as its limit allows (nobody cannot raise it).
    per_holder = max(2, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64)
    holders = [min(per_holder, sockets - start) for start in range(0, sockets, per_holder)]
    children += [child(started_read, started_write, lambda count=count: holder(count)) for count in holders]
    for _ in holders:
        os.read(started_read, 1)
    children += [child(started_read, started_write, lambda: connect_loop(port, started_write)) for _ in range(loops)]
    os.close(started_write)
    for _ in range(loops):
        if os.read(started_read, 1) != b".":
            break
    print("flooding", flush=True)
    sys.stdin.read()
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
