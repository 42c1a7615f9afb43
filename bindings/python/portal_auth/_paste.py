"""A magic-link sign-in that also takes the link pasted into a terminal, whichever comes
first: over SSH the email's link brings the browser back to 127.0.0.1 on the laptop where
it is opened, not to the machine that waits, so the user pastes it instead.

The sign-in waits on a thread of its own while this thread watches the terminal; a pasted
link goes to handle_redirect, which completes the waiting sign-in too. The terminal is read
only while the sign-in waits, straight from its descriptor, so nothing is left reading it
afterwards (the next prompt, for the TOTP code, gets what the user types)."""

from __future__ import annotations

import _thread
import os
import select
import signal

from . import _calls
from .errors import SignInUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    class Readable(Protocol):
        """A file open for reading, such as sys.stdin: only its descriptor is used."""

        def fileno(self) -> int:
            """The file's descriptor."""
            ...


NOT_A_LINK = "portal-auth: that is not a sign-in link of this app; paste the whole link from the email."


def sign_in(
    wait: Callable[[], Any],
    handle: Callable[[str], Any],
    send: Callable[[], None],
    cancel: Callable[[], None],
    paste_from: int | Readable,
) -> Any:
    """`wait()` (the one-call sign-in) on a thread, and lines from `paste_from` to
    `handle(url)` here, until one of them has the outcome. A redirect URL that is not
    loopback has no wait: `send()` emails the link, and only a paste completes."""
    terminal = paste_from if isinstance(paste_from, int) else paste_from.fileno()
    outcome: list[Any] = []
    done, finished = os.pipe()

    def waiting() -> None:
        try:
            outcome.append((True, wait()))
        except BaseException as error:  # noqa: BLE001 - handed to the thread that asked
            outcome.append((False, error))
        finally:
            os.write(finished, b"x")

    _thread.start_new_thread(waiting, ())
    waiting_thread = True  # until its outcome is taken
    signals = _SignalWakeup()
    watched, pending = [terminal, done], b""
    try:
        while True:
            ready, _, _ = select.select(watched + signals.descriptors, [], [])
            if signals.taken(ready):
                continue  # its handler runs now, here (Ctrl-C: KeyboardInterrupt)
            if done in ready:
                _joined(done)
                waiting_thread = False
                succeeded, value = outcome.pop()
                if succeeded:
                    return value
                if not _no_wait_here(value):
                    raise value
                if terminal not in watched:  # closed already: nobody can paste
                    raise EOFError
                send()  # a custom scheme: no email was sent yet, and a paste completes
                watched = [terminal]
                continue
            chunk = os.read(terminal, 4096)
            if not chunk:  # the terminal closed: the browser may still come
                if not waiting_thread:
                    raise EOFError
                watched = [done]
                continue
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                url = line.decode("utf-8", "replace").strip()
                if not url:
                    continue
                result = handle(url)
                if result is None:
                    _calls.say(NOT_A_LINK)
                    continue
                return result  # the pasted link completed the wait too: the thread ends
    finally:
        # Ctrl-C, an error, or a pasted outcome: the wait ends (cancelled, or completed by
        # the paste) before its pipe goes.
        if waiting_thread:
            cancel()
            _joined(done)
        signals.close()
        os.close(done)
        os.close(finished)


class _SignalWakeup:
    """Wakes the main thread's select for a signal: Ctrl-C is sent to the process, and the
    kernel may hand it to any thread (the waiting one, a library thread), which leaves the
    main thread asleep in select with the handler pending. A wake-up descriptor
    (signal.set_wakeup_fd) is written whichever thread takes it, for the time of the wait;
    the one installed before comes back after. Off the main thread, signals are not this
    thread's to handle, and it watches none."""

    def __init__(self) -> None:
        self.descriptors: list[int] = []
        try:
            read, write = os.pipe()
        except OSError:
            return
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        try:
            self._previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:  # not the main thread
            os.close(read)
            os.close(write)
            return
        self.descriptors = [read]
        self._write = write

    def taken(self, ready: list[int]) -> bool:
        """Whether a signal woke the select; its bytes are read."""
        if not self.descriptors or self.descriptors[0] not in ready:
            return False
        try:
            while os.read(self.descriptors[0], 512):
                pass
        except BlockingIOError:
            pass
        return True

    def close(self) -> None:
        if not self.descriptors:
            return
        signal.set_wakeup_fd(self._previous)
        os.close(self.descriptors[0])
        os.close(self._write)
        self.descriptors = []


def _joined(done: int) -> None:
    """Until the waiting thread has ended (it writes once, when it does)."""
    select.select([done], [], [])
    os.read(done, 1)


def _no_wait_here(error: BaseException) -> bool:
    from ._reasons import SignInUnavailableReason

    return isinstance(error, SignInUnavailable) and error.reason is SignInUnavailableReason.REDIRECT_NOT_LOOPBACK
