"""libportalauth.so.0: where it is found (by its soname), and the C declarations of
include/portal_auth.h that the binding calls, with the header's constants under their names
less the PORTAL_AUTH_ prefix (tests/test_abi.py compares them all with the header). Loaded
on first use: importing the package needs no library, a missing one fails the first call."""

from __future__ import annotations

import _thread
import ctypes
import os

from . import _threads
from ._codes import *  # noqa: F403 (every OK, E_* and REASON_* number)
from .errors import InvalidArgument, LibraryNotFound

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# os.path rather than pathlib: importing pathlib (with fnmatch, re and urllib.parse) cost
# more than the rest of the package's own code.
LIBRARY_FILE = "libportalauth.so.0"
_PACKAGE_DIR = os.path.dirname(os.path.realpath(__file__))
# bindings/python/portal_auth → the repository root, when running from a checkout.
_REPOSITORY_BUILD = os.path.normpath(os.path.join(_PACKAGE_DIR, "..", "..", "..", ".build", "release", LIBRARY_FILE))


def library_path() -> str:
    """The library the contract names: PORTAL_AUTH_LIBRARY when set, else the copy next to
    the package, else the repository's release build, else the system's (a distribution's
    package installs it in the loader's path): its bare soname, for dlopen to search."""
    override = os.environ.get("PORTAL_AUTH_LIBRARY")
    if override:
        path = os.path.realpath(override)  # a bare name would send dlopen to the loader's path
        if not os.path.isfile(path):
            raise LibraryNotFound(f"PORTAL_AUTH_LIBRARY names {path}, which is not a file")
        return path
    for path in (os.path.join(_PACKAGE_DIR, LIBRARY_FILE), _REPOSITORY_BUILD):
        if os.path.isfile(path):
            return path
    return LIBRARY_FILE


def _open(path: str) -> ctypes.CDLL:
    try:
        return ctypes.CDLL(path)
    except OSError as error:
        if path != LIBRARY_FILE:
            raise
        raise LibraryNotFound(
            f"{LIBRARY_FILE} is not beside the package ({_PACKAGE_DIR}), nor at {_REPOSITORY_BUILD}, "
            "nor in the system's library path; install libportalauth0 (or reinstall portal-auth), "
            "build it with `make library`, or set PORTAL_AUTH_LIBRARY to its path"
        ) from error


# Handles are opaque: the binding only passes their addresses back.
handle = ctypes.c_void_p
code_t = ctypes.c_int32
char_p = ctypes.c_char_p
out_handle = ctypes.POINTER(ctypes.c_void_p)

# Completion callbacks (portal_auth.h). Pointer arguments arrive as plain integers; the enum
# types of the header are C ints.
DONE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
METHODS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
URL_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
RESULT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
SESSION_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p)
STORAGE_GET_FN = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)
)
STORAGE_SET_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
STORAGE_REMOVE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
STORAGE_RELEASE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
OPENER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32)
REDIRECT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)
FORWARD_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)

# Constants of portal_auth.h; the codes and the reasons are generated into _codes.
FALSE, TRUE = 0, 1
UNSET, YES, NO = 0, 1, 2
STORAGE_KEYRING, STORAGE_MEMORY, STORAGE_HOST, STORAGE_FILE = 0, 1, 2, 3
RESULT_AUTHENTICATED, RESULT_TOTP_REQUIRED = 1, 2
LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR, LOG_NONE = 0, 1, 2, 3, 4
TERMINAL_LIGHT_ON_DARK, TERMINAL_DARK_ON_LIGHT = 0, 1
TOTP_CODE_SIZE = 7
# portal_auth_options.request_timeout_ms: "zero or less: 30,000 ms" (the header's words,
# which the ABI test reads): how long exit waits at most for an exchange of a client that
# left it to the library.
DEFAULT_REQUEST_TIMEOUT_MS = 30_000


class StorageCallbacks(ctypes.Structure):
    """struct portal_auth_storage_callbacks."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("get", STORAGE_GET_FN),
        ("set", STORAGE_SET_FN),
        ("remove", STORAGE_REMOVE_FN),
        ("user_data", ctypes.c_void_p),
        ("release", STORAGE_RELEASE_FN),
    ]


class Options(ctypes.Structure):
    """portal_auth_options."""

    _fields_ = [
        ("size", ctypes.c_size_t),
        ("auth_environment_id", ctypes.c_char_p),
        ("redirect_url", ctypes.c_char_p),
        ("api_host", ctypes.c_char_p),
        ("magic_link_from_email", ctypes.c_char_p),
        ("magic_link_template_id", ctypes.c_char_p),
        ("is_account_abstracted", ctypes.c_int32),
        ("storage", ctypes.c_int32),
        ("connect_timeout_ms", ctypes.c_int32),
        ("request_timeout_ms", ctypes.c_int32),
        ("host_storage", ctypes.POINTER(StorageCallbacks)),
        ("application_id", ctypes.c_char_p),
        ("keyring_prompt_timeout_ms", ctypes.c_int32),
        ("file_storage_path", ctypes.c_char_p),
        ("completion_queue", ctypes.c_void_p),
        ("ca_file", ctypes.c_char_p),
    ]


# name: (restype, argtypes)
_PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "portal_auth_version": (char_p, []),
    "portal_auth_options_init": (None, [ctypes.POINTER(Options), ctypes.c_size_t]),
    "portal_auth_new": (code_t, [ctypes.POINTER(Options), out_handle, out_handle]),
    "portal_auth_free": (None, [handle]),
    "portal_auth_call_cancel": (None, [handle]),
    "portal_auth_call_free": (None, [handle]),
    "portal_auth_get_methods": (code_t, [handle, METHODS_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_methods_count": (ctypes.c_size_t, [handle]),
    "portal_auth_methods_at": (char_p, [handle, ctypes.c_size_t]),
    "portal_auth_methods_auto_create_wallet": (ctypes.c_int32, [handle]),
    "portal_auth_send_magic_link": (code_t, [handle, char_p, DONE_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_login_with_google": (code_t, [handle, URL_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_login_with_apple": (code_t, [handle, URL_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_handle_redirect": (code_t, [handle, char_p, RESULT_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_verify_totp": (code_t, [handle, char_p, char_p, RESULT_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_restore_session": (code_t, [handle, SESSION_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_clear_persisted_session": (code_t, [handle, DONE_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_result_kind": (ctypes.c_int32, [handle]),
    "portal_auth_result_session": (handle, [handle]),
    "portal_auth_result_client_id": (char_p, [handle]),
    "portal_auth_result_is_account_abstracted": (ctypes.c_int32, [handle]),
    "portal_auth_result_user_jwt": (char_p, [handle]),
    "portal_auth_result_totp_link": (char_p, [handle]),
    "portal_auth_result_end_user_id": (char_p, [handle]),
    "portal_auth_result_totp_expires_at": (ctypes.c_int64, [handle]),
    "portal_auth_session_retain": (handle, [handle]),
    "portal_auth_session_release": (None, [handle]),
    "portal_auth_session_end_user_id": (char_p, [handle]),
    "portal_auth_session_copy_token": (code_t, [handle, ctypes.POINTER(ctypes.c_void_p), out_handle]),
    "portal_auth_session_invalidate": (code_t, [handle, DONE_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_string_free": (None, [ctypes.c_void_p]),
    "portal_auth_error_code": (code_t, [handle]),
    "portal_auth_error_message": (char_p, [handle]),
    "portal_auth_error_name": (char_p, [handle]),
    "portal_auth_error_path": (char_p, [handle]),
    "portal_auth_error_missing": (char_p, [handle]),
    "portal_auth_error_detail": (char_p, [handle]),
    "portal_auth_error_method": (char_p, [handle]),
    "portal_auth_error_http_status": (ctypes.c_int32, [handle]),
    "portal_auth_error_body": (char_p, [handle]),
    "portal_auth_error_reason": (ctypes.c_int32, [handle]),
    "portal_auth_error_retry_after": (ctypes.c_int64, [handle]),
    "portal_auth_error_url": (char_p, [handle]),
    "portal_auth_reason_name": (char_p, [ctypes.c_int32]),
    "portal_auth_reason_user_message": (char_p, [ctypes.c_int32]),
    "portal_auth_error_free": (None, [handle]),
    "portal_auth_set_log_handler": (code_t, [LOG_FN, ctypes.c_void_p]),
    "portal_auth_set_log_level": (code_t, [ctypes.c_int32]),
    "portal_auth_set_queued_log_handler": (code_t, [LOG_FN, ctypes.c_void_p]),
    "portal_auth_completion_fd": (ctypes.c_int32, []),
    "portal_auth_run_completions": (ctypes.c_size_t, []),
    "portal_auth_set_completion_queue": (code_t, [handle, ctypes.c_int32]),
    "portal_auth_totp_secret": (code_t, [char_p, ctypes.POINTER(ctypes.c_void_p), out_handle]),
    "portal_auth_totp_qr_png": (
        code_t,
        [char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), out_handle],
    ),
    "portal_auth_totp_qr_matrix": (
        code_t,
        [
            char_p,
            ctypes.POINTER(ctypes.c_int32),
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_size_t),
            out_handle,
        ],
    ),
    "portal_auth_totp_qr_svg": (code_t, [char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), out_handle]),
    "portal_auth_totp_qr_terminal": (code_t, [char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), out_handle]),
    "portal_auth_bytes_free": (None, [ctypes.c_void_p]),
    "portal_auth_totp_code_normalize": (ctypes.c_int32, [char_p, ctypes.c_char_p]),
    "portal_auth_sign_in_with_google": (code_t, [handle, ctypes.c_int32, RESULT_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_sign_in_with_apple": (code_t, [handle, ctypes.c_int32, RESULT_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_set_browser_opener": (code_t, [handle, OPENER_FN, ctypes.c_void_p]),
    "portal_auth_set_prefers_ephemeral_web_browser_session": (code_t, [handle, ctypes.c_int32]),
    "portal_auth_prefers_ephemeral_web_browser_session": (ctypes.c_int32, [handle]),
    "portal_auth_sign_in_with_magic_link": (
        code_t, [handle, char_p, ctypes.c_int32, RESULT_FN, ctypes.c_void_p, out_handle]
    ),
    "portal_auth_listen_for_redirects": (code_t, [handle, REDIRECT_FN, ctypes.c_void_p, out_handle]),
    "portal_auth_forward_redirect": (code_t, [ctypes.POINTER(Options), char_p, FORWARD_FN, ctypes.c_void_p]),
}

_loaded: ctypes.CDLL | None = None
_loading = _thread.allocate_lock()


def _forked() -> None:
    global _loading
    _loading = _thread.allocate_lock()


_threads.after_fork(_forked)
_on_load: list[Callable[[ctypes.CDLL], None]] = []


def lib() -> ctypes.CDLL:
    """The loaded library, with every prototype set and the hooks of on_load run (loads it
    on first use)."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _loading:
        if _loaded is None:
            loaded = _open(library_path())
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(loaded, name)
                function.restype = restype
                function.argtypes = argtypes
            for hook in _on_load:
                hook(loaded)
            _loaded = loaded
        return _loaded


def on_load(hook: Callable[[ctypes.CDLL], None]) -> None:
    """Runs `hook(library)` once the library is loaded (at once if it is): how the layers
    above set it up (the log bridge) without this one knowing them."""
    with _loading:
        if _loaded is None:
            _on_load.append(hook)
            return
    hook(_loaded)


def text(value: bytes | None) -> str | None:
    """A UTF-8 string the library returned (borrowed), as str."""
    return None if value is None else value.decode("utf-8")


def required_text(value: bytes | None) -> str:
    """A string the library always returns for a valid handle."""
    return "" if value is None else value.decode("utf-8")


def c_text(value: object, name: str) -> bytes:
    """A str argument as C's UTF-8, or InvalidArgument(name): not a str, a NUL inside (C
    would cut the string there), or not encodable."""
    if not isinstance(value, str) or "\0" in value:
        raise InvalidArgument(name)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(name) from None


def take_string(pointer: ctypes.c_void_p) -> str:
    """A string the library handed over, read and then freed (portal_auth_string_free)."""
    try:
        return ctypes.string_at(pointer.value).decode("utf-8") if pointer.value else ""
    finally:
        lib().portal_auth_string_free(pointer)
