"""The log of Portal requests, and waiting on it without polling."""

import threading

from .messages import JsonObject, portal_path_matches


class RequestLog:
    """Every Portal request received, for GET /_emulator/requests and its waits."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._entries: list[JsonObject] = []
        self._closed = False

    def record(self, entry: JsonObject) -> None:
        """Logs one request."""
        with self._changed:
            self._entries.append(entry)
            self._changed.notify_all()

    def entries(self) -> list[JsonObject]:
        """The requests logged, oldest first."""
        with self._changed:
            return list(self._entries)

    def clear(self) -> None:
        """Forgets the requests logged."""
        with self._changed:
            self._entries.clear()
            self._changed.notify_all()

    def count(self, path: str) -> int:
        """How many requests to `path` were logged."""
        with self._changed:
            return self._count_locked(path)

    def _count_locked(self, path: str) -> int:
        return sum(1 for entry in self._entries if portal_path_matches(path, entry["path"]))

    def wait_for(self, path: str, count: int, timeout: float) -> tuple[bool, int]:
        """Block until `count` requests to `path` are logged; (reached, current count)."""
        with self._changed:
            reached = self._changed.wait_for(
                lambda: self._closed or self._count_locked(path) >= count, timeout
            )
            current = self._count_locked(path)
            return bool(reached) and current >= count, current

    def close(self) -> None:
        """Wakes every waiter: the emulator stops."""
        # Wakes blocked waiters when the emulator stops.
        with self._changed:
            self._closed = True
            self._changed.notify_all()
