"""The names of the files written to in a folder as they are (inotify, through libc: the
standard library has no binding), so that a trial can crash a process the moment it has
written a file there. Its descriptor goes into a selector."""

from __future__ import annotations

import ctypes
import os
import struct

IN_MODIFY = 0x2
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
EVENT = struct.Struct("iIII")   # struct inotify_event without its name: wd, mask, cookie, len


class FolderWatch:
    def __init__(self, folder: str) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd: int = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if libc.inotify_add_watch(self.fd, os.fsencode(folder), IN_MODIFY) < 0:
            errno = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(errno, f"inotify_add_watch failed on {folder}")

    def fileno(self) -> int:
        return self.fd

    def written(self) -> list[str]:
        """The names of the files written to since the last call."""
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        names = []
        offset = 0
        while offset < len(data):
            _, _, _, length = EVENT.unpack_from(data, offset)
            offset += EVENT.size
            names.append(os.fsdecode(data[offset:offset + length].rstrip(b"\0")))
            offset += length
        return names

    def close(self) -> None:
        os.close(self.fd)
