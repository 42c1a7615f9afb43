"""Asynchronous C calls as blocking calls and as awaitables.

Every call registers under an integer key, passed to C as user_data; one C function pointer
per callback type (alive as long as the module) finds the call by its key. The registry
keeps each call alive until its callback has fired, which the library does exactly once.
The callback turns the borrowed C values into Python objects at once, on the library's
thread, then hands the outcome to a waiting thread or to the event loop that awaits it.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import itertools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import asyncio  # at run time imported by the first awaited call: blocking users skip its ~60 ms

from . import _native, _threads, errors

T = TypeVar("T")

# starter(callback, user_data, out_call) -> code: calls one portal_auth_* function with the
# C function pointer, the call's key as user_data, and where to store the call handle.
Starter = Callable[[Any, int, ctypes.c_void_p], int]


class _Outcome:
    """A call's value, or the exception it ends with."""

    __slots__ = ("value", "error")

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error


class _Pending:
    """One call in flight: its C call handle (to cancel), and where its outcome goes."""

    __slots__ = ("deliver", "group", "lock", "handle", "finished")

    def __init__(self, deliver: Callable[[_Outcome], None], group: object) -> None:
        self.deliver = deliver
        self.group = group
        self.lock = threading.Lock()
        self.handle: int | None = None
        self.finished = False

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


_registry: dict[int, _Pending] = {}
_registry_changed = threading.Condition()
_keys = itertools.count(1)


def _register(pending: _Pending) -> int:
    with _registry_changed:
        key = next(_keys)
        _registry[key] = pending
        return key


def _unregister(key: int) -> _Pending | None:
    with _registry_changed:
        pending = _registry.pop(key, None)
        _registry_changed.notify_all()
        return pending


def _complete(key: int | None, read: Callable[[], Any]) -> None:
    """Runs in the C callback: reads the borrowed values, then delivers the outcome."""
    pending = _unregister(key or 0)
    if pending is None:
        return
    try:
        outcome: _Outcome = _Outcome(value=read())
    except errors.PortalAuthError as error:
        outcome = _Outcome(error=error)
    except BaseException:  # noqa: BLE001 - a callback must not raise into C
        outcome = _Outcome(error=errors.PortalAuthError("portal-auth returned a value the binding could not read."))
    pending.finish()
    pending.deliver(outcome)


def check(error: int | None) -> None:
    """Raises the exception of a borrowed error handle, if any."""
    if error:
        raise errors.from_handle(error)


class Callback(Generic[T]):
    """A C completion function pointer whose calls complete the pending call named by their
    user_data with `read(*rest)`, which turns the borrowed arguments into a T."""

    def __init__(self, prototype: Any, read: Callable[..., T]) -> None:
        @_threads.from_library
        def trampoline(key: int | None, *arguments: Any) -> None:
            _complete(key, lambda: read(*arguments))

        self.pointer = prototype(trampoline)


def _done(error: int | None) -> None:
    check(error)


DONE = Callback(_native.DONE_FN, _done)


def cancel_group(group: object) -> None:
    """Cancels every call in flight that was started with `group`."""
    with _registry_changed:
        members = [pending for pending in _registry.values() if pending.group is group]
    for pending in members:
        pending.cancel()


def _start(
    callback: Callback[Any], starter: Starter, deliver: Callable[[_Outcome], None], group: object = None
) -> _Pending:
    pending = _Pending(deliver, group)
    key = _register(pending)
    out_call = ctypes.c_void_p()
    try:
        code = starter(callback.pointer, key, out_call)
    except BaseException:
        _unregister(key)
        raise
    if code != _native.OK:
        _unregister(key)  # the library never calls back for a refused call
        raise errors.from_code(code, "")
    pending.started(out_call.value)
    return pending


def blocking(callback: Callback[T], starter: Starter, settle_on_cancel: bool = False, group: object = None) -> T:
    """Starts the call and waits for its outcome. An interruption (Ctrl-C) cancels the call
    on the terms of client-auth.md §5 and propagates; with `settle_on_cancel`, only once the
    library has ended the call (a browser sign-in: its listener closed, its guard released).
    `group` tags the call for cancel_group."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def deliver(outcome: _Outcome) -> None:
        if outcome.error is not None:
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome.value)

    pending = _start(callback, starter, deliver, group)
    try:
        return future.result()
    except BaseException:
        if not future.done():
            pending.cancel()
            if settle_on_cancel:
                concurrent.futures.wait([future])
        raise


async def awaiting(
    callback: Callback[T], starter: Starter, settle_on_cancel: bool = False, group: object = None
) -> T:
    """Starts the call and awaits its outcome on the running loop. Cancelling the awaiting
    task cancels the call (a request already sent still completes, and its session is
    persisted) and raises asyncio.CancelledError in the task: at once, or with
    `settle_on_cancel` once the library has ended the call (see blocking)."""
    import asyncio  # already loaded: this runs inside a running event loop

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    ended = loop.create_future()

    def settle(outcome: _Outcome) -> None:
        if not ended.done():
            ended.set_result(None)
        if future.done():  # the awaiting task was cancelled
            return
        if outcome.error is not None:
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome.value)

    def deliver(outcome: _Outcome) -> None:
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:  # the loop is closed: nobody awaits this outcome any more
            pass

    pending = _start(callback, starter, deliver, group)
    try:
        return await future
    except asyncio.CancelledError:
        pending.cancel()
        if settle_on_cancel:
            await ended
        raise


def _drain() -> None:
    """At exit: cancels what has not been sent and waits for the rest (an exchange in flight
    still persists its session)."""
    with _registry_changed:
        waiting = list(_registry.values())
    for pending in waiting:
        pending.cancel()
    with _registry_changed:
        _registry_changed.wait_for(lambda: not _registry)


_threads.at_exit(_drain)
