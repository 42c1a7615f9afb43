"""Asynchronous C calls as blocking calls and as awaitables.

Every call registers under an integer key, passed to C as user_data; one C function pointer
per callback type (alive as long as the module) finds the call by its key. The registry
keeps each call alive until its callback has fired, which the library does exactly once.
The callback turns the borrowed C values into Python objects at once, on the library's
thread, stores the outcome in the call and wakes its waiter: a blocking caller through a
lock the caller holds, an awaiting task through one call_soon_threadsafe into its loop.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from . import _log, _native, _threads, errors

T = TypeVar("T")

# starter(callback, user_data, out_call) -> code: calls one portal_auth_* function with the
# C function pointer, the call's key as user_data, and where to store the call handle.
Starter = Callable[[Any, int, ctypes.c_void_p], int]


def _nobody() -> None:
    pass


class _Call:
    """One call in flight: its C call handle (to cancel), its outcome once the callback has
    read it, and how the callback wakes the waiter."""

    __slots__ = ("group", "lock", "handle", "finished", "value", "error", "wake")

    def __init__(self, group: object) -> None:
        self.group = group
        self.lock = threading.Lock()
        self.handle: int | None = None
        self.finished = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.wake: Callable[[], object] = _nobody

    def started(self, handle: int | None) -> None:
        with self.lock:
            if not self.finished:
                self.handle = handle
                return
        _native.lib().portal_auth_call_free(handle)

    def finish(self) -> None:
        with self.lock:
            self.finished = True
            handle, self.handle = self.handle, None
        if handle is not None:
            _native.lib().portal_auth_call_free(handle)

    def cancel(self) -> None:
        # Under the lock: the callback cannot free the handle meanwhile.
        with self.lock:
            if self.handle is not None:
                _native.lib().portal_auth_call_cancel(self.handle)

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


_registry: dict[int, _Call] = {}
_registry_lock = threading.Lock()
# Notified only while exit drains the calls in flight.
_registry_emptied = threading.Condition(_registry_lock)
_draining = False
_keys = itertools.count(1)


def _register(call: _Call) -> int:
    with _registry_lock:
        key = next(_keys)
        _registry[key] = call
        return key


def _unregister(key: int) -> _Call | None:
    with _registry_lock:
        call = _registry.pop(key, None)
        if _draining and not _registry:
            _registry_emptied.notify_all()
        return call


def check(error: int | None) -> None:
    """Raises the exception of a borrowed error handle, if any."""
    if error:
        raise errors.from_handle(error)


class Callback(Generic[T]):
    """A C completion function pointer whose calls complete the pending call named by their
    user_data with `read(*rest)`, which turns the borrowed arguments into a T."""

    def __init__(self, prototype: Any, read: Callable[..., T]) -> None:
        @_threads.from_library
        def complete(key: int | None, *arguments: Any) -> None:
            with _registry_lock:
                call = _registry.get(key or 0)
            if call is None:
                return
            try:
                call.value = read(*arguments)
            except errors.PortalAuthError as error:
                call.error = error
            except BaseException:  # noqa: BLE001 - a callback must not raise into C
                call.error = errors.PortalAuthError("portal-auth returned a value the binding could not read.")
            call.finish()
            # Only once read: when exit finds the registry empty, every session these calls
            # made is in the session map, which exit releases next.
            _unregister(key or 0)
            # Let go of the wake first: an awaited call's wake refers back to the call, a
            # cycle that would otherwise be left to the garbage collector on every call.
            wake, call.wake = call.wake, _nobody
            wake()

        self.pointer = prototype(complete)


def _done(error: int | None) -> None:
    check(error)


DONE = Callback(_native.DONE_FN, _done)


def cancel_group(group: object) -> None:
    """Cancels every call in flight that was started with `group`."""
    with _registry_lock:
        members = [call for call in _registry.values() if call.group is group]
    for call in members:
        call.cancel()


def _start(call: _Call, callback: Callback[Any], starter: Starter) -> None:
    _log.pass_level()  # before the call: its lines are filtered by the level now
    key = _register(call)
    out_call = ctypes.c_void_p()
    try:
        code = starter(callback.pointer, key, out_call)
    except BaseException:
        _unregister(key)
        raise
    if code != _native.OK:
        _unregister(key)  # the library never calls back for a refused call
        raise errors.from_code(code, "")
    call.started(out_call.value)


def blocking(callback: Callback[T], starter: Starter, settle_on_cancel: bool = False, group: object = None) -> T:
    """Starts the call and waits for its outcome. An interruption (Ctrl-C) cancels the call
    on the terms of docs/protocol.md §5 and propagates; with `settle_on_cancel`, only once the
    library has ended the call (a browser sign-in: its listener closed, its guard released).
    `group` tags the call for cancel_group."""
    call = _Call(group)
    # Held until the callback releases it: the cheapest wake there is, and interruptible.
    delivered = threading.Lock()
    delivered.acquire()
    call.wake = delivered.release
    _start(call, callback, starter)
    try:
        delivered.acquire()
    except BaseException:
        if not call.finished:  # the callback has not fired yet (its release may be what is left)
            call.cancel()
            if settle_on_cancel:
                delivered.acquire()
        raise
    result: T = call.outcome()
    return result


def awaiting(
    callback: Callback[T], starter: Starter, settle_on_cancel: bool = False, group: object = None
) -> Coroutine[Any, Any, T]:
    """Starts the call and awaits its outcome on the running loop. Cancelling the awaiting
    task cancels the call (a request already sent still completes, and its session is
    persisted) and raises asyncio.CancelledError in the task: at once, or with
    `settle_on_cancel` once the library has ended the call (see blocking)."""
    from . import _awaited  # imports asyncio, so only here: blocking users skip its ~60 ms

    return _awaited.awaiting(callback, starter, settle_on_cancel, group)


def _drain() -> None:
    """At exit: cancels what has not been sent and waits for the rest (an exchange in flight
    still persists its session)."""
    global _draining
    with _registry_lock:
        waiting = list(_registry.values())
    for call in waiting:
        call.cancel()
    with _registry_emptied:
        _draining = True
        _registry_emptied.wait_for(lambda: not _registry)


_threads.at_exit(_drain)
