"""Faults a test queues against Portal paths, and the gate behind which "hold"
requests wait until the test releases them."""

import threading
from dataclasses import dataclass
from typing import TypeGuard

from .messages import ApiError, JsonObject, portal_path_matches

KINDS = ("latency", "status", "malformed", "drop", "lost", "hold", "truncated", "oversized")
DEFAULT_STATUS_BODY = '{"error":"injected"}'
MAX_LATENCY_MS = 60_000
DEFAULT_OVERSIZED_BYTES = 10 << 20  # ten times the client's response cap
MIN_OVERSIZED_BYTES = 1 << 10
MAX_OVERSIZED_BYTES = 64 << 20


@dataclass
class Fault:
    """A fault queued against a Portal path: what happens to the next `remaining` requests to it."""

    path: str
    kind: str
    remaining: int  # 0 means "until cleared"
    method: str | None = None  # None matches any method
    ms: int = 0
    status: int = 0
    body: str = ""
    size: int = 0
    retry_after: str | None = None  # a status fault's Retry-After header, as sent

    def describe(self) -> JsonObject:
        """The fault as GET /_emulator/faults shows it."""
        return {
            "path": self.path,
            "kind": self.kind,
            "count": self.remaining,
            "method": self.method,
            "ms": self.ms,
            "status": self.status,
            "body": self.body,
            "size": self.size,
            "retryAfter": self.retry_after,
        }


def parse_fault(raw: JsonObject) -> Fault:
    """The fault a test posted; ApiError(400) when it is unusable."""
    path = raw.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ApiError(400, "path must be a string starting with /")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise ApiError(400, "kind must be one of " + ", ".join(KINDS))
    count = raw.get("count", 1)
    if not _is_int(count) or count < 0:
        raise ApiError(400, "count must be a non-negative integer")
    method = raw.get("method")
    if method is not None and (not isinstance(method, str) or not method):
        raise ApiError(400, "method must be a non-empty string")
    fault = Fault(path=path, kind=kind, remaining=count, method=method.upper() if method else None)
    if kind == "latency":
        ms = raw.get("ms")
        if not _is_int(ms) or not 0 <= ms <= MAX_LATENCY_MS:
            raise ApiError(400, f"ms must be an integer from 0 to {MAX_LATENCY_MS}")
        fault.ms = ms
    elif kind == "status":
        status = raw.get("status")
        if not _is_int(status) or not 200 <= status <= 599:
            raise ApiError(400, "status must be an integer from 200 to 599")
        fault.status = status
        fault.body = _body(raw, DEFAULT_STATUS_BODY)
        retry_after = raw.get("retryAfter")
        if retry_after is not None and (not isinstance(retry_after, str) or not retry_after.isprintable()):
            raise ApiError(400, "retryAfter must be a string of printable characters")
        fault.retry_after = retry_after
    elif kind in ("malformed", "truncated"):
        fault.body = _body(raw, None if kind == "malformed" else "")
    elif kind == "oversized":
        size = raw.get("size", DEFAULT_OVERSIZED_BYTES)
        if not _is_int(size) or not MIN_OVERSIZED_BYTES <= size <= MAX_OVERSIZED_BYTES:
            raise ApiError(400, f"size must be an integer from {MIN_OVERSIZED_BYTES} to {MAX_OVERSIZED_BYTES}")
        fault.size = size
    return fault


def _body(raw: JsonObject, default: str | None) -> str:
    body = raw.get("body", default)
    if not isinstance(body, str):
        raise ApiError(400, "body must be a string")
    return body


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class FaultQueue:
    """The queued faults, and the gate behind which "hold" requests wait until released."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._faults: list[Fault] = []
        # Each release bumps the generation; a held request waits for a newer one.
        self._generation = 0
        self._held = 0
        self._stopped = threading.Event()

    def add(self, fault: Fault) -> None:
        """Queues `fault`."""
        with self._cond:
            self._faults.append(fault)

    def list(self) -> list[JsonObject]:
        """The queued faults, described."""
        with self._cond:
            return [fault.describe() for fault in self._faults]

    def clear(self) -> None:
        """Drop queued faults and let any held request go, so none hangs forever."""
        with self._cond:
            self._faults.clear()
            self._generation += 1
            self._cond.notify_all()

    def take(self, method: str, path: str) -> tuple[Fault | None, int]:
        """The fault for this request (or None) and a hold ticket.

        The ticket is taken before the request is logged: a test that sees the
        request in the log and then releases always releases this request too.
        """
        with self._cond:
            ticket = self._generation
            for index, fault in enumerate(self._faults):
                if fault.method not in (None, method) or not portal_path_matches(fault.path, path):
                    continue
                if fault.remaining == 1:
                    del self._faults[index]
                elif fault.remaining > 1:
                    fault.remaining -= 1
                return fault, ticket
            return None, ticket

    def hold(self, ticket: int) -> None:
        """Blocks the calling request until a release newer than `ticket` (or the emulator stops)."""
        with self._cond:
            self._held += 1
            try:
                self._cond.wait_for(lambda: self._generation > ticket or self._stopped.is_set())
            finally:
                self._held -= 1

    def release(self) -> int:
        """Let every held request proceed; returns how many were waiting."""
        with self._cond:
            waiting = self._held
            self._generation += 1
            self._cond.notify_all()
            return waiting

    def pause(self, ms: int) -> None:
        """Waits `ms` milliseconds, or less if the emulator stops meanwhile."""
        # An Event wait, so stopping the emulator cuts injected latency short.
        self._stopped.wait(ms / 1000.0)

    def close(self) -> None:
        """Ends every hold and pause: the emulator stops."""
        with self._cond:
            self._stopped.set()
            self._cond.notify_all()
