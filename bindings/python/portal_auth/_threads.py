"""The library's threads in Python: counted, so that exit can wait until none is inside.

Completions and log lines run on Python's own threads (the completion queue), but a host
session store and the browser opener are called on library threads. CPython 3.11 ends a
thread that wants the GIL once the interpreter is finalising, with pthread_exit; for a
libdispatch worker of the library that is a crash. So at exit the binding waits for every
call in flight (the library's timeouts bound the wait) and for every library thread to leave
Python, and lengthens the GIL switch interval so that a thread which has just signalled its
leaving is never made to give the GIL up and ask for it again.
"""

from __future__ import annotations

import atexit
import functools
import sys
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# Every call of a store or an opener passes here: a plain lock keeps the count cheap, and
# the condition on it is notified only once exit waits.
_lock = threading.Lock()
_left = threading.Condition(_lock)
_inside = 0
_exiting = False
_exit_hooks: list[Callable[[], None]] = []


def from_library(function: Callable[P, R]) -> Callable[P, R]:
    """Wraps a function the library calls on its own threads (through ctypes)."""

    @functools.wraps(function)
    def counted(*args: P.args, **kwargs: P.kwargs) -> R:
        global _inside
        with _lock:
            _inside += 1
        try:
            return function(*args, **kwargs)
        finally:
            # Leaving and signalling under the one lock: exit cannot see the count drop while
            # this thread still has a lock to wait for.
            with _lock:
                _inside -= 1
                if _exiting:
                    _left.notify_all()

    return counted


def at_exit(hook: Callable[[], None]) -> None:
    """Runs `hook` at exit, before the wait for the library's threads (hooks cancel calls,
    uninstall callbacks, and wait for what they started)."""
    _exit_hooks.append(hook)


def _settle_at_exit() -> None:
    global _exiting
    sys.setswitchinterval(1.0)
    for hook in _exit_hooks:
        hook()
    with _left:
        _exiting = True
        _left.wait_for(lambda: _inside == 0)


atexit.register(_settle_at_exit)
