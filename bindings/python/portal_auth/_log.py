"""The library's log lines, at every level, go to the standard logger `portal_auth`, whose
level filters them. The library never puts a secret in a log line.

The lines come through the completion queue (portal_auth_set_queued_log_handler): they reach
the logger on the thread that runs the queue, a thread waiting for a call, never on a
library thread. Each line the library passes over costs a queue entry and a call into
Python, more than the line itself; so the library is told the lowest level the logger lets
through whenever a call starts, and keeps the rest to itself."""

from __future__ import annotations

import _thread
import ctypes
import sys

from . import _native, _threads

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging

# The library's levels (PORTAL_AUTH_LOG_*), lowest first, and the logging module's numbers
# for them (DEBUG, INFO, WARNING, ERROR).
_LEVELS = {_native.LOG_DEBUG: 10, _native.LOG_INFO: 20, _native.LOG_WARNING: 30, _native.LOG_ERROR: 40}
_NO_LINE = _native.LOG_NONE  # the library passes no line

_logger: logging.Logger | None = None
_making = _thread.allocate_lock()
_passed: int | None = None  # the level the library was last given
_passing = _thread.allocate_lock()


def _forked() -> None:
    global _making, _passing
    _making, _passing = _thread.allocate_lock(), _thread.allocate_lock()


_threads.after_fork(_forked)


def logger() -> logging.Logger | None:
    """The `portal_auth` logger, once anything in the process has imported `logging`; None
    before. Until then no handler can have been configured, so no line could reach one, and
    importing `logging` here would cost more than the rest of the package's import."""
    global _logger
    if _logger is None:
        logging = sys.modules.get("logging")
        if logging is None:
            return None
        with _making:
            if _logger is None:
                made = logging.getLogger("portal_auth")
                # Silent unless the application configures logging, as the C library is by default.
                made.addHandler(logging.NullHandler())
                _logger = made
    return _logger


def warning(message: str, *arguments: object) -> None:
    """A warning of the binding's own (a host callback that failed)."""
    log = logger()
    if log is not None:
        log.warning(message, *arguments)


def debug(message: str, *arguments: object) -> None:
    """A debug line of the binding's own (what exit waits for)."""
    log = logger()
    if log is not None:
        log.debug(message, *arguments)


def _forward(user_data: int | None, level: int, message: bytes | None) -> None:
    log = logger()
    python_level = _LEVELS.get(level, 40)
    if log is not None and message is not None and log.isEnabledFor(python_level):
        log.log(python_level, "%s", message.decode("utf-8", "replace"))


# One C function pointer for the process, alive as long as the module.
_on_log = _native.LOG_FN(_forward)


def _lowest_enabled() -> int:
    log = logger()
    for library_level, python_level in _LEVELS.items():
        if log is not None and log.isEnabledFor(python_level):
            return library_level
    return _NO_LINE


def pass_level() -> None:
    """Gives the library the lowest level the logger lets through now (it changes with
    setLevel, logging.disable or a parent's level), if that is not the one it has: two
    cached lookups at most, on every call's start, where finding it again takes up to four."""
    passed, log = _passed, _logger or logger()
    if passed is not None:
        if log is None:
            if passed == _NO_LINE:
                return
        elif (passed == 0 or not log.isEnabledFor(_LEVELS[passed - 1])) and (
            passed == _NO_LINE or log.isEnabledFor(_LEVELS[passed])
        ):
            return
    _pass_level(_native.lib())


def _pass_level(lib: ctypes.CDLL) -> None:
    global _passed
    with _passing:
        level = _lowest_enabled()
        if level != _passed:
            lib.portal_auth_set_log_level(level)
            _passed = level


def _install(lib: ctypes.CDLL) -> None:
    """Once the library is loaded: the log bridge, uninstalled at exit (the library then
    never calls it again)."""
    _pass_level(lib)
    # Without a queue (no descriptor left) no client can be made either: nothing would log.
    lib.portal_auth_set_queued_log_handler(_on_log, None)
    _threads.at_exit(lambda: lib.portal_auth_set_queued_log_handler(_native.LOG_FN(), None))


_native.on_load(_install)
