"""Asynchronous C calls as blocking calls, completed on Python's threads (_awaited makes them
awaitables on the same terms).

Every client sends its completions to the library's completion queue
(portal_auth_set_completion_queue), so the library never enters Python on a thread of its
own for a call: a thread that waits runs the queue (portal_auth_run_completions) once right
after starting a blocking or awaited call (its first step is queued there), then whenever
its descriptor is readable. A blocking caller polls the descriptor; an asyncio loop watches
it with add_reader (_awaited). The one exception is portal_auth_forward_redirect, which has
no client: its callback runs on a library thread, which wakes the waiter from there.

Every call registers under an integer key, passed to C as user_data; one C function pointer
per callback type (alive as long as the module) finds the call by its key. The registry
keeps each call alive until its callback has run, which the library does exactly once. The
callback turns the borrowed C values into Python objects at once and marks the call
finished; once the run is over, the thread that ran it wakes the call's waiter: nothing to
do for its own blocking call, another thread's through that thread's eventfd, an awaiting
task by resuming it (from its loop's reader), in the loop's next pass (from a run inside one
of the loop's tasks), or through call_soon_threadsafe. A stream
(portal_auth_listen_for_redirects) is the multi-shot kind: it queues each outcome for its
waiter, and stays registered until its last call.

At exit every call in flight is cancelled, and exit waits only for those whose end must be
seen: the exchanges (docs/protocol.md §5: one on the wire still persists its session), and,
while the library holds a session store of the application's, every call (the library
calls that store, and releases it, on its threads; _threads). Each wait lasts at most the
call's request timeout. The rest are left to the library: their completions stay queued.
"""

from __future__ import annotations

import _thread
import ctypes
import itertools
import os

from . import _error_handles, _log, _native, _threads, errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from typing import Any, Generic, TypeVar

    T = TypeVar("T")

    # starter(callback, user_data, out_call) -> code: calls one portal_auth_* function with
    # the C function pointer, the call's key as user_data, and where to store the call handle.
    Starter = Callable[[Any, int, ctypes.c_void_p], int]
else:
    # The generic classes below are generic for the type checkers only: subscripting them
    # at run time gives the class itself, and typing (several milliseconds to import) is
    # never loaded.
    class Generic:
        __slots__ = ()

        def __class_getitem__(cls, item: object) -> type:
            return cls

    T = None

DEFAULT_TIMEOUT = _native.DEFAULT_REQUEST_TIMEOUT_MS / 1000


def _nobody() -> None:
    pass


class Start(Generic[T]):
    """One call to make: the callback that reads its outcome, how to start it, and how it
    ends. `persists`: an exchange, whose end exit waits for (within `timeout` seconds, the
    client's request timeout). `settle_on_cancel`: a cancelled waiter still waits for the
    library to end the call (a browser sign-in: its listener closed, its guard released).
    `group` tags the call for cancel_group. `keeps`: what the call keeps alive until it has
    ended (a browser sign-in's opener, added as it starts)."""

    __slots__ = ("callback", "starter", "persists", "settle_on_cancel", "group", "timeout", "keeps")

    def __init__(
        self,
        callback: Callback[T],
        starter: Starter,
        *,
        persists: bool = False,
        settle_on_cancel: bool = False,
        group: object = None,
        timeout: float = DEFAULT_TIMEOUT,
        keeps: list[Any] | None = None,
    ) -> None:
        self.callback = callback
        self.starter = starter
        self.persists = persists
        self.settle_on_cancel = settle_on_cancel
        self.group = group
        self.timeout = timeout
        self.keeps = keeps


class _Call:
    """One call in flight: its C call handle (to cancel), its outcome once the callback has
    read it, and how to wake its waiter."""

    __slots__ = ("start", "lock", "handle", "finished", "value", "error", "wake")

    def __init__(self, start: Start[Any]) -> None:
        self.start = start
        self.lock = _thread.allocate_lock()
        self.handle: int | None = None
        self.finished = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.wake: Callable[[], object] = _nobody

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


class _Waiter:
    """A thread's wait: for the completion queue's descriptor, or for another thread that
    ran this thread's completion to say so on an eventfd of the thread's own."""

    __slots__ = ("thread", "fd", "poller")

    def __init__(self) -> None:
        import select  # by a thread's first wait: a client that makes no call needs none

        self.thread = _thread.get_ident()
        self.fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self.poller = select.poll()
        self.poller.register(queue_fd(), select.POLLIN)
        self.poller.register(self.fd, select.POLLIN)

    def wait(self, timeout: float | None = None) -> None:
        """Until the queue has work, another thread woke this one, or `timeout`
        seconds passed (interruptible)."""
        for fd, _ in self.poller.poll(None if timeout is None else max(timeout, 0.0) * 1000):
            if fd == self.fd:
                try:
                    os.eventfd_read(self.fd)
                except BlockingIOError:  # another wait of this thread took it
                    pass

    def wake(self) -> None:
        """From any thread: ends this thread's wait, unless this is that thread."""
        if _thread.get_ident() != self.thread:
            os.eventfd_write(self.fd, 1)

    def __del__(self) -> None:
        os.close(self.fd)


class _PerThread(_thread._local):
    """A thread's waiter (made by its first wait), and the calls that the run under way on
    it has finished and the interruptions it has caught (None outside a run). Class
    defaults, so that reading them needs no getattr with a default."""

    waiter: _Waiter | None = None
    ran: list[_Call] | None = None
    interrupts: list[BaseException] | None = None


_local = _PerThread()
_queue_fd: int | None = None


def queue_fd() -> int:
    """The completion queue's descriptor (the process has one)."""
    global _queue_fd
    if _queue_fd is None:
        fd = int(_native.lib().portal_auth_completion_fd())
        if fd < 0:
            raise errors.PortalAuthError("portal-auth has no file descriptor left for its completion queue.")
        _queue_fd = fd
    return _queue_fd


def _waiter() -> _Waiter:
    waiter = _local.waiter
    if waiter is None:
        waiter = _local.waiter = _Waiter()
    return waiter


def run() -> None:
    """Runs the completions pending in the library's queue on this thread, then wakes their
    waiters. A signal's exception (Ctrl-C) raised inside a completion is raised here, after."""
    # A run may happen inside a run (a logging handler that makes a blocking call).
    local = _local
    outer = local.ran, local.interrupts
    ran: list[_Call] = []
    interrupts: list[BaseException] = []
    local.ran, local.interrupts = ran, interrupts
    try:
        _native.lib().portal_auth_run_completions()
    finally:
        local.ran, local.interrupts = outer
        for call in ran:
            # Let go of the wake first: an awaited call's wake refers back to the call, a cycle
            # that would otherwise be left to the garbage collector on every call.
            wake, call.wake = call.wake, _nobody
            try:
                wake()
            except BaseException as interrupt:  # noqa: BLE001 - a task it resumed was interrupted
                interrupts.append(interrupt)  # raised once every waiter is woken
    if interrupts:
        raise interrupts[0]


_registry: dict[int, _Call] = {}
_registry_lock = _thread.allocate_lock()
_keys = itertools.count(1)
_exit_waiter: _Waiter | None = None  # set while exit waits for calls in flight


def _forked() -> None:
    """In a forked child: the parent's calls are not the child's (the library never completes
    them here), and its threads' waiters (their eventfds, shared with the parent) neither.
    The queue's descriptor keeps its number: the library renews it for the child."""
    global _registry_lock, _local, _exit_waiter
    _registry.clear()
    _registry_lock = _thread.allocate_lock()
    _local = _PerThread()
    _exit_waiter = None


_threads.after_fork(_forked)


def _register(call: _Call) -> int:
    with _registry_lock:
        key = next(_keys)
        _registry[key] = call
        return key


def _unregister(key: int) -> _Call | None:
    with _registry_lock:
        call = _registry.pop(key, None)
        waiter = _exit_waiter
    if waiter is not None:
        waiter.wake()
    return call


def _read(read: Callable[..., Any], arguments: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
    """`read(*arguments)` inside a callback from C, which must not raise: (value, None), or
    (None, the exception for the caller). A signal's exception (Ctrl-C) is kept for run()."""
    try:
        return read(*arguments), None
    except errors.PortalAuthError as error:
        return None, error
    except (KeyboardInterrupt, SystemExit) as interrupt:  # a signal's, on the main thread
        interrupts = _local.interrupts
        if interrupts is not None:
            interrupts.append(interrupt)
        return None, errors.PortalAuthError("The call's outcome was lost to an interruption while it was read.")
    except BaseException:  # noqa: BLE001 - a callback must not raise into C
        return None, errors.PortalAuthError("portal-auth returned a value the binding could not read.")


def _arrived(call: _Call) -> None:
    """A callback has given `call` something: its waiter is woken once the run is over (at
    once when the run is not this module's: a library thread's, for a call with no client)."""
    ran = _local.ran
    if ran is None:
        wake, call.wake = call.wake, _nobody
        wake()
    else:
        ran.append(call)


class Callback(Generic[T]):
    """A C completion function pointer whose calls complete the pending call named by their
    user_data with `read(*rest)`, which turns the borrowed arguments into a T. The pointer
    (a libffi closure, not free to make) is made by the first call of its kind."""

    __slots__ = ("_prototype", "_read", "pointer")

    def __init__(self, prototype: Any, read: Callable[..., T]) -> None:
        self._prototype = prototype
        self._read = read
        # The C function pointer once made (make_pointer), alive as long as this object (the
        # module's): a plain attribute, read as every call starts.
        self.pointer: Any = None

    def make_pointer(self) -> Any:
        """The C function pointer, made by the first call that needs it."""
        with _registry_lock:  # one pointer only: C may hold the first made
            if self.pointer is None:
                self.pointer = self._prototype(self._complete)
            return self.pointer

    def _complete(self, key: int | None, *arguments: Any) -> None:
        with _registry_lock:
            call = _registry.get(key or 0)
        if call is None:
            return
        try:
            call.value, call.error = _read(self._read, arguments)
        finally:
            call.finish()
            # Only once read: when exit finds the calls it waits for gone, every session
            # they made is in the session map, which exit releases next.
            _unregister(key or 0)
            _arrived(call)


def _done(error: int | None) -> None:
    _error_handles.check(error)


DONE = Callback(_native.DONE_FN, _done)


class Stream(_Call):
    """A multi-shot call (portal_auth_listen_for_redirects): its outcomes, in order, until its
    last call, which marks it finished (with `error` saying why, unless it merely closed)."""

    __slots__ = ("outcomes",)

    def __init__(self, start: Start[Any]) -> None:
        super().__init__(start)
        self.outcomes: list[Any] = []  # a handful at most: a user's redirects, one by one

    def take(self, wake: Callable[[], object]) -> tuple[bool | None, Any]:
        """(True, the next outcome) when one is there; (False, None) once the stream has
        finished; else installs `wake` for the next outcome and returns (None, None)."""
        with self.lock:
            if self.outcomes:
                return True, self.outcomes.pop(0)
            if self.finished:
                return False, None
            self.wake = wake
            return None, None


class StreamCallback(Callback[T]):
    """The C function pointer of a stream's callback: `read(*arguments)` turns each call's
    borrowed arguments into (last, outcome); a last call's outcome is the exception that
    ended the stream, or None. The last argument of every call is C's `last` flag."""

    __slots__ = ()

    def _complete(self, key: int | None, *arguments: Any) -> None:
        with _registry_lock:
            stream = _registry.get(key or 0)
        if not isinstance(stream, Stream):
            return
        read_back, failure = _read(self._read, arguments)
        last, outcome = (bool(arguments[-1]), failure) if failure is not None else read_back
        with stream.lock:
            if last:
                stream.error = outcome
            else:
                stream.outcomes.append(outcome)
        if last:
            stream.finish()
            _unregister(key or 0)
        _arrived(stream)


def start_stream(start: Start[Any]) -> Stream:
    """Starts a multi-shot call (`start.callback` a StreamCallback); its outcomes arrive in
    the returned stream."""
    stream = Stream(start)
    begin(stream)
    return stream


def next_outcome(stream: Stream) -> tuple[bool, Any]:
    """Waits for the stream's next outcome on this thread, running the completion queue:
    (True, outcome), or (False, None) once it has finished."""
    waiter = _waiter()
    while True:
        ready, outcome = stream.take(waiter.wake)
        if ready is not None:
            return ready, outcome
        waiter.wait()
        run()


class Ready:
    """An awaitable that is already done: a synchronous method of an asyncio object (close(),
    a setter) works whether or not its caller awaits it."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


def cancel_group(group: object) -> None:
    """Cancels every call in flight that was started with `group`."""
    with _registry_lock:
        members = [call for call in _registry.values() if call.start.group is group]
    for call in members:
        call.cancel()


def begin(call: _Call) -> None:
    """Starts the call (its waker set), or raises what the library refused it with."""
    _log.pass_level()  # before the call: its lines are filtered by the level now
    key = _register(call)
    out_call = ctypes.c_void_p()
    start = call.start
    try:
        code = start.starter(start.callback.pointer or start.callback.make_pointer(), key, out_call)
    except BaseException:
        _unregister(key)
        raise
    if code != _native.OK:
        _unregister(key)  # the library never calls back for a refused call
        raise _error_handles.from_code(code, "")
    with call.lock:
        if not call.finished:  # the handle, to cancel it, until the callback frees it
            call.handle = out_call.value
            return
    _native.lib().portal_auth_call_free(out_call.value)


def _wait(call: _Call, waiter: _Waiter) -> None:
    while not call.finished:
        waiter.wait()
        run()


def blocking(start: Start[T]) -> T:
    """Starts the call and waits for its outcome, running the completion queue meanwhile. An
    interruption (Ctrl-C) cancels the call on the terms of docs/protocol.md §5 and
    propagates; with `settle_on_cancel`, only once the library has ended the call."""
    call = _Call(start)
    waiter = _waiter()
    call.wake = waiter.wake
    begin(call)
    try:
        run()  # a call started on the queue has its first step there: no poll to learn that
        _wait(call, waiter)
    except BaseException:
        if not call.finished:
            call.cancel()
            if start.settle_on_cancel:
                _wait(call, waiter)
        raise
    if call.error is not None:
        raise call.error
    result: T = call.value
    return result


def _settling(everything: bool) -> list[_Call]:
    with _registry_lock:
        return [call for call in _registry.values() if everything or call.start.persists]


def say(line: str) -> None:
    """One line on stderr, whatever the logging setup."""
    import sys

    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass  # no stderr (closed, or a GUI program's None)


def _drain() -> None:
    """At exit: cancels every call in flight at once, then runs the queue until the calls it
    must see end have ended, or their request timeout has passed."""
    global _exit_waiter
    with _registry_lock:
        calls = list(_registry.values())
    for call in calls:
        call.cancel()
    # With a store of the application's held, every call may still call it, or release it.
    everything = bool(_threads.held)
    waited = _settling(everything)
    if not waited:
        if everything:
            _threads.settle_within(DEFAULT_TIMEOUT)
        return
    _threads.settle_within(max(call.start.timeout for call in waited))
    if not everything:
        # Only calls whose answer must be kept (a session) are waited for: the user sees why
        # the program has not ended, and how to end it.
        say(f"portal-auth: finishing the sign-in before exit (at most {_threads.remaining():.0f} s); Ctrl-C to abort it.")
    _log.debug("exit: waiting at most %.1f s for %d calls in flight", _threads.remaining(), len(waited))
    waiter = _waiter()
    with _registry_lock:
        _exit_waiter = waiter  # a thread that finishes a call wakes this one
    while _settling(everything) and _threads.remaining() > 0:
        waiter.wait(_threads.remaining())
        run()


_threads.at_exit(_drain)
