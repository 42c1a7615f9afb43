"""The library's log lines, at every level, go to the standard logger `portal_auth`, whose
level filters them. The library never puts a secret in a log line."""

from __future__ import annotations

import ctypes
import logging

from . import _native, _threads

logger = logging.getLogger("portal_auth")
# Silent unless the application configures logging, as the C library is by default.
logger.addHandler(logging.NullHandler())

_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}


@_threads.from_library
def _forward(user_data: int | None, level: int, message: bytes | None) -> None:
    python_level = _LEVELS.get(level, logging.ERROR)
    if message is not None and logger.isEnabledFor(python_level):
        logger.log(python_level, "%s", message.decode("utf-8", "replace"))


# One C function pointer for the process, alive as long as the module.
_on_log = _native.LOG_FN(_forward)


def install(lib: ctypes.CDLL) -> None:
    lib.portal_auth_set_log_handler(_on_log, None)
    _threads.at_exit(lambda: lib.portal_auth_set_log_handler(_native.LOG_FN(), None))
