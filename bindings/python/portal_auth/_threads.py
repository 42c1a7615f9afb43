"""The library's threads in Python, and what exit waits for.

Completions and log lines run on Python's own threads (the completion queue), but a host
session store and the browser opener are called on library threads. CPython 3.11 ends a
thread that wants the GIL once the interpreter is finalising, with pthread_exit; for a
thread of the library that is a crash. So no library thread may enter Python once exit is
over: the binding counts the library threads inside Python and the stores the library
still holds (which it calls, and releases, on its threads), and exit waits until neither is
left, within the deadline the calls in flight set (their request timeouts). It lengthens the
GIL switch interval meanwhile, so that a thread which has just signalled its leaving is
never made to give the GIL up and ask for it again.

Exit runs the hooks of at_exit in order (the layers above: cancel and settle the calls in
flight, free the clients, release the sessions), then those waits. A Ctrl-C while exit
waits ends the process at once, by SIGINT, as a second Ctrl-C does for any program.

A child that os.fork() makes (multiprocessing's "fork") has only the forking thread: what
the parent's other threads held (a lock, a count, a call in flight) is theirs, never the
child's. The hooks of after_fork reset each module's such state there, and `generation`
tells the objects made before the fork that they are the parent's (a client then makes its
own handle: the library's rule, docs/desktop.md "fork()").
"""

from __future__ import annotations

import _thread
import atexit
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ParamSpec, TypeVar

    P = ParamSpec("P")
    R = TypeVar("R")


class Countdown:
    """A count that other threads raise and lower, and that exit waits to see at zero."""

    __slots__ = ("_lock", "_count", "_waiting")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._count = 0
        self._waiting: _thread.LockType | None = None

    def up(self) -> None:
        with self._lock:
            self._count += 1

    def down(self) -> None:
        with self._lock:
            self._count -= 1
            waiting = self._waiting if self._count == 0 else None
            if waiting is not None:
                self._waiting = None
        if waiting is not None:
            waiting.release()

    def __bool__(self) -> bool:
        return self._count > 0

    def wait_for_zero(self, timeout: float) -> bool:
        """Until the count is zero, at most `timeout` seconds (interruptible); whether it is."""
        waiting = _thread.allocate_lock()
        waiting.acquire()
        with self._lock:
            if self._count == 0:
                return True
            self._waiting = waiting
        return waiting.acquire(timeout=max(timeout, 0.0))


inside = Countdown()
"""Library threads running Python now (a store's or an opener's call)."""
held = Countdown()
"""Host session stores the library holds: it may call them, and releases each, on its threads."""

_exit_hooks: list[Callable[[], None]] = []
_deadline = 0.0  # time.monotonic() by which exit stops waiting
_fork_hooks: list[Callable[[], None]] = []
generation = 0
"""How many forks this process is a child of (0 in the process that imported the package)."""


def from_library(function: Callable[P, R]) -> Callable[P, R]:
    """Wraps a function the library calls on its own threads (through ctypes)."""

    def counted(*args: P.args, **kwargs: P.kwargs) -> R:
        inside.up()
        try:
            return function(*args, **kwargs)
        finally:
            inside.down()

    counted.__name__, counted.__doc__ = function.__name__, function.__doc__
    return counted


def at_exit(hook: Callable[[], None]) -> None:
    """Runs `hook` at exit, in the order registered, before the waits for the library's
    threads (hooks cancel calls, free clients, release sessions)."""
    _exit_hooks.append(hook)


def settle_within(seconds: float) -> None:
    """Exit waits at most `seconds` from now (the longest request timeout of what it waits for)."""
    global _deadline
    _deadline = max(_deadline, time.monotonic() + seconds)


def remaining() -> float:
    """Seconds left before exit's deadline."""
    return _deadline - time.monotonic()


def _end_now() -> None:
    """A Ctrl-C while exit waits: the process ends at once, by SIGINT, its output flushed."""
    import os
    import signal

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def _settle_at_exit() -> None:
    sys.setswitchinterval(1.0)
    try:
        for hook in _exit_hooks:
            hook()
        if held:
            held.wait_for_zero(remaining())
        inside.wait_for_zero(remaining())
    except KeyboardInterrupt:
        _end_now()


def after_fork(hook: Callable[[], None]) -> None:
    """Runs `hook` in each child of os.fork(), before anything else there uses the package."""
    _fork_hooks.append(hook)


def _forked() -> None:
    global inside, held, _deadline, generation
    generation += 1
    inside, held = Countdown(), Countdown()
    _deadline = 0.0
    for hook in _fork_hooks:
        hook()


atexit.register(_settle_at_exit)
os.register_at_fork(after_in_child=_forked)
