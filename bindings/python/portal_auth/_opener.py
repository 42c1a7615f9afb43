"""The host's browser opener, fn(url, ephemeral), reached by the library through
portal_auth_set_browser_opener. One C function pointer for the process; user_data names the
client whose opener to call. An exception from the opener fails the sign-in
(SignInUnavailable) without its text, which might quote the authorize URL."""

from __future__ import annotations

import _thread

from . import _log, _native, _threads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Opener = Callable[[str, bool], None]

_openers: dict[int, Opener] = {}
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
        opener(url.decode("utf-8"), bool(ephemeral))
    except BaseException as error:  # noqa: BLE001 - a failed opener is the sign-in's to report
        _log.warning("the browser opener raised %s", type(error).__name__)
        return 1
    return 0


OPEN = _native.OPENER_FN(_open)
NONE = _native.OPENER_FN()


def install(key: int, opener: Opener | None) -> None:
    """Installs the opener of client `key` (None removes it)."""
    with _lock:
        if opener is None:
            _openers.pop(key, None)
        else:
            _openers[key] = opener
