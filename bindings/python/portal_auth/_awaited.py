"""Calls awaited on an asyncio loop (imported by the first awaited call, with asyncio, which
costs more to import than the whole package: blocking programs never load it).

Each loop that awaits a call watches the completion queue's descriptor with add_reader, so
its completions run on the loop's own thread. The awaiting task runs a call's first step
itself (its start queued it), which saves a pass through the selector on every call. The
future a completion settles from the reader resumes the awaiting task at once, in that same
loop iteration, where a plain future would schedule the task for the next one (another pass
through the selector). A completion that another thread runs reaches the loop with one
call_soon_threadsafe."""

from __future__ import annotations

import asyncio
import contextvars
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from . import _calls, _threads

T = TypeVar("T")

_Resume = tuple[Callable[[Any], object], "contextvars.Context | None"]


class _Outcome(asyncio.Future[T]):
    """The future one task awaits for one call. Nobody else sees it: the only callback is
    the task's own wakeup, added when the task starts waiting and never removed."""

    __slots__ = ("_resume", "settled", "ended")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self._resume: list[_Resume] = []
        self.settled = False  # the call's outcome has reached the loop
        self.ended: asyncio.Future[None] | None = None  # awaited by a task cancelled with settle_on_cancel

    def add_done_callback(self, fn: Callable[[Any], object], *, context: contextvars.Context | None = None) -> None:
        if self.done():
            super().add_done_callback(fn, context=context)
        else:
            self._resume.append((fn, context))

    def cancel(self, msg: Any | None = None) -> bool:
        if not super().cancel(msg=msg):
            return False
        # As a plain future does: the task learns of it in the next loop iteration.
        resume, self._resume = self._resume, []
        for fn, context in resume:
            self.get_loop().call_soon(fn, self, context=context)
        return True

    def settle(self, call: _calls._Call) -> None:
        """On the loop's thread, from a loop callback (never inside a task): hands the call's
        outcome to the task and resumes it."""
        self.settled = True
        if self.ended is not None and not self.ended.done():
            self.ended.set_result(None)
        if self.done():  # the awaiting task was cancelled
            return
        if call.error is not None:
            self.set_exception(call.error)
        else:
            self.set_result(call.value)
        resume, self._resume = self._resume, []
        for fn, context in resume:
            if context is None:
                fn(self)
            else:
                context.run(fn, self)


# The loops whose reader runs the completion queue: each keeps it until it is closed. The
# last one found there is looked at first: a call of the loop that made the last one needs
# no WeakSet lookup (Python code, and a weak reference made each time).
_watching: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
_last_watched: Callable[[], asyncio.AbstractEventLoop | None] = lambda: None


def _forked() -> None:
    """A forked child's loops are its own (asyncio's are not fork-safe: the child makes new
    ones), and each watches the queue anew."""
    global _watching, _last_watched
    _watching = weakref.WeakSet()
    _last_watched = lambda: None  # noqa: E731


_threads.after_fork(_forked)


def _watch(loop: asyncio.AbstractEventLoop) -> None:
    global _last_watched
    if _last_watched() is loop:
        return
    if loop not in _watching:
        loop.add_reader(_calls.queue_fd(), _calls.run)
        _watching.add(loop)
    _last_watched = weakref.ref(loop)


async def awaiting(start: _calls.Start[T]) -> T:
    """Starts the call and awaits its outcome on the running loop. Cancelling the awaiting
    task cancels the call (a request already sent still completes, and its session is
    persisted) and raises asyncio.CancelledError in the task: at once, or with
    `settle_on_cancel` once the library has ended the call (see _calls.blocking)."""
    loop = asyncio.get_running_loop()
    _watch(loop)
    outcome: _Outcome[T] = _Outcome(loop)
    call = _calls._Call(start)

    def wake() -> None:
        # From the loop's reader (outside any task), settle here; from a task of the loop (a
        # run that a call's start made), in the loop's next pass; else hand it to the loop.
        if asyncio._get_running_loop() is loop:
            if asyncio.current_task(loop) is None:
                outcome.settle(call)
            else:
                loop.call_soon(outcome.settle, call)
            return
        try:
            loop.call_soon_threadsafe(outcome.settle, call)
        except RuntimeError:  # the loop is closed: nobody awaits this outcome any more
            pass

    call.wake = wake
    _calls.begin(call)
    try:
        _calls.run()  # the call's first step is queued: taken now, not after the selector
    except BaseException:  # an interruption (Ctrl-C) inside the run ends the call, as blocking's
        call.cancel()
        raise
    try:
        return await outcome
    except asyncio.CancelledError:
        call.cancel()
        if start.settle_on_cancel and not outcome.settled:
            outcome.ended = loop.create_future()
            await outcome.ended
        raise


async def next_outcome(stream: _calls.Stream) -> tuple[bool, Any]:
    """As _calls.next_outcome, awaited on the running loop (whose reader runs the queue)."""
    loop = asyncio.get_running_loop()
    _watch(loop)
    while True:
        arrived: asyncio.Future[None] = loop.create_future()

        def settle(arrived: asyncio.Future[None] = arrived) -> None:
            if not arrived.done():
                arrived.set_result(None)

        def wake(settle: Callable[[], None] = settle) -> None:
            if asyncio._get_running_loop() is loop:
                settle()
                return
            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # the loop is closed: nobody awaits this stream any more
                pass

        ready, outcome = stream.take(wake)
        if ready is not None:
            return ready, outcome
        await arrived
