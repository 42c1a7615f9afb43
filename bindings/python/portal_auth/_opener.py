"""The host's browser opener, fn(url, ephemeral), reached by the library through
portal_auth_set_browser_opener. One C function pointer for the process; user_data names the
client whose opener to call. An opener that returns False (webbrowser.open's "no browser")
ends the sign-in at once with NO_BROWSER; one that raises fails it with OPENER_FAILED, whose
message leaves out the exception's text (it might quote the authorize URL): the exception
itself is kept for the client, which makes it the error's __cause__.
"""

from __future__ import annotations

import _thread

from . import _log, _native, _threads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Opener = Callable[[str, bool], object]

_openers: dict[int, Opener] = {}
# What each client's opener last raised, until its sign-in's error takes it.
_failures: dict[int, BaseException] = {}
_lock = _thread.allocate_lock()


def _forked() -> None:
    global _lock
    _lock = _thread.allocate_lock()


_threads.after_fork(_forked)


@_threads.from_library
def _open(key: int | None, url: bytes | None, ephemeral: int) -> int:
    with _lock:
        opener = _openers.get(key or 0)
    if opener is None or url is None:
        return 1
    try:
        opened = opener(url.decode("utf-8"), bool(ephemeral))
    except BaseException as error:  # noqa: BLE001 - a failed opener is the sign-in's to report
        _log.warning("the browser opener raised %s", type(error).__name__)
        with _lock:
            _failures[key or 0] = error
        return 1
    return _native.REASON_NO_BROWSER if opened is False else 0


OPEN = _native.OPENER_FN(_open)
NONE = _native.OPENER_FN()


def install(key: int, opener: Opener | None) -> None:
    """Installs the opener of client `key` (None removes it)."""
    with _lock:
        _failures.pop(key, None)
        if opener is None:
            _openers.pop(key, None)
        else:
            _openers[key] = opener


def take_failure(key: int) -> BaseException | None:
    """What client `key`'s opener last raised, forgotten once taken (one browser sign-in
    runs at a time per client, so it is that sign-in's)."""
    with _lock:
        return _failures.pop(key, None)
