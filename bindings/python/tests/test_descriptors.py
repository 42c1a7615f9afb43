"""The library's descriptors never reach a program the application starts: its connections
to the API are close-on-exec from the start (the browser it spawns itself is tested in
test_browser)."""

from __future__ import annotations

import fcntl
import os
import urllib.parse
from typing import Any

from conftest import Emulator


def connections_to(port: int) -> list[int]:
    """This process's descriptors of TCP connections to the loopback `port`."""
    inodes = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if remote_port == port and fields[3] == "01":  # ESTABLISHED
                    inodes.add(fields[9])
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
        if target.startswith("socket:[") and target[8:-1] in inodes:
            found.append(int(name))
    return found


def test_the_connection_to_the_api_is_close_on_exec(make_client: Any, env: str, emu: Emulator) -> None:
    client = make_client(env, storage="memory")
    client.get_methods()  # the connection stays open for the next call
    port = urllib.parse.urlsplit(emu.url).port
    assert port is not None
    descriptors = connections_to(port)
    assert descriptors, "no connection of the library's to the emulator"
    for fd in descriptors:
        assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC, f"descriptor {fd} would reach a child"
