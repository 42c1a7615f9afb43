"""The host's browser opener, fn(url, ephemeral), reached by the library through
portal_auth_set_browser_opener. One C function pointer for the process; user_data names the
installation whose opener to call. An opener that returns False (webbrowser.open's "no
browser") ends the sign-in at once with NO_BROWSER; one that raises fails it with
OPENER_FAILED, whose message leaves out the exception's text (it might quote the authorize
URL): the exception itself is kept with the installation, which makes it the error's
__cause__.

A sign-in calls the opener installed when its call was made (the library reads it then): the
client keeps its installation while it is installed, and each sign-in keeps the one it
started with until it has called back (client.py); the library's call then finds it here.
"""

from __future__ import annotations

import _thread
import itertools
import weakref

from . import _log, _native, _threads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Opener = Callable[[str, bool], object]


class Installed:
    """One opener as installed: `key`, the user_data the library passes back, and what the
    opener last raised, until the sign-in's error takes it."""

    __slots__ = ("opener", "key", "failure", "__weakref__")

    def __init__(self, opener: Opener) -> None:
        self.opener = opener
        self.key = next(_keys)
        self.failure: BaseException | None = None


_keys = itertools.count(1)
# Each installation while someone keeps it (a client, a sign-in in flight).
_installed: weakref.WeakValueDictionary[int, Installed] = weakref.WeakValueDictionary()
_lock = _thread.allocate_lock()


def _forked() -> None:
    global _lock
    _lock = _thread.allocate_lock()


_threads.after_fork(_forked)


@_threads.from_library
def _open(key: int | None, url: bytes | None, ephemeral: int) -> int:
    with _lock:
        installed = _installed.get(key or 0)
    if installed is None or url is None:
        return 1
    try:
        opened = installed.opener(url.decode("utf-8"), bool(ephemeral))
    except BaseException as error:  # noqa: BLE001 - a failed opener is the sign-in's to report
        _log.warning("the browser opener raised %s", type(error).__name__)
        installed.failure = error
        return 1
    return _native.REASON_NO_BROWSER if opened is False else 0


OPEN = _native.OPENER_FN(_open)
NONE = _native.OPENER_FN()


def install(opener: Opener) -> Installed:
    """A new installation of `opener`, found by its key while it is kept."""
    installed = Installed(opener)
    with _lock:
        _installed[installed.key] = installed
    return installed


def take_failure(installed: Installed) -> BaseException | None:
    """What the installation's opener last raised, forgotten once taken (one browser sign-in
    runs at a time per client, so it is that sign-in's)."""
    failure, installed.failure = installed.failure, None
    return failure
