"""A host's session store (any object with get, set and delete), reached by the library
through the C ABI's host-supplied storage. The library serialises the calls per environment
and applies the fault taxonomy; this module only carries values across, and turns an
exception into a failure code (the library's own message replaces its text, which might
quote a stored value)."""

from __future__ import annotations

import _thread
import ctypes
import itertools

from . import _log, _native, _threads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ._session_store import SessionStore

_stores: dict[int, SessionStore] = {}
_stores_lock = _thread.allocate_lock()
_keys = itertools.count(1)


def _forked() -> None:
    global _stores_lock
    _stores_lock = _thread.allocate_lock()


_threads.after_fork(_forked)

_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]

_FAILED = 1


def _store(key: int | None) -> SessionStore | None:
    with _stores_lock:
        return _stores.get(key or 0)


def _failed(store: SessionStore, method: str, error: BaseException) -> int:
    _log.warning("the session store %s.%s() raised %s", type(store).__name__, method, type(error).__name__)
    return _FAILED


@_threads.from_library
def _get(key: int | None, environment_id: bytes | None, out_value: Any) -> int:
    store = _store(key)
    if store is None:
        return _FAILED
    try:
        value = store.get()
    except BaseException as error:  # noqa: BLE001 - any failure of the host's store is transient
        return _failed(store, "get", error)
    if value is None:
        out_value[0] = None
        return 0
    if not isinstance(value, str):
        # The host's mistake, not a stored value gone bad: transient, nothing deleted.
        _log.warning("the session store %s.get() returned a %s, not a str", type(store).__name__, type(value).__name__)
        return _FAILED
    try:
        encoded = value.encode("utf-8") if "\0" not in value else b""
    except UnicodeEncodeError:
        encoded = b""  # a string the library cannot read: undecodable, so it is deleted
    buffer = _libc.malloc(len(encoded) + 1)
    if not buffer:
        return _FAILED
    ctypes.memmove(buffer, encoded + b"\0", len(encoded) + 1)
    out_value[0] = buffer  # the library frees it with free()
    return 0


@_threads.from_library
def _set(key: int | None, environment_id: bytes | None, value: bytes | None) -> int:
    store = _store(key)
    if store is None or value is None:
        return _FAILED
    try:
        store.set(value.decode("utf-8"))
    except BaseException as error:  # noqa: BLE001
        return _failed(store, "set", error)
    return 0


@_threads.from_library
def _remove(key: int | None, environment_id: bytes | None) -> int:
    store = _store(key)
    if store is None:
        return _FAILED
    try:
        store.delete()
    except BaseException as error:  # noqa: BLE001
        return _failed(store, "delete", error)
    return 0


@_threads.from_library
def _release(key: int | None) -> None:
    with _stores_lock:
        released = _stores.pop(key or 0, None) is not None
    if released:
        _threads.held.down()


_GET = _native.STORAGE_GET_FN(_get)
_SET = _native.STORAGE_SET_FN(_set)
_REMOVE = _native.STORAGE_REMOVE_FN(_remove)
_RELEASE = _native.STORAGE_RELEASE_FN(_release)


def callbacks(store: SessionStore) -> _native.StorageCallbacks:
    """The C callbacks for `store`, which stays reachable until the library releases it
    (when the client and all its sessions are gone, or at once if the client is refused);
    until then exit waits for the library to be done with it (_threads.held)."""
    with _stores_lock:
        key = next(_keys)
        _stores[key] = store
    _threads.held.up()
    return _native.StorageCallbacks(
        size=ctypes.sizeof(_native.StorageCallbacks),
        get=_GET,
        set=_SET,
        remove=_REMOVE,
        user_data=key,
        release=_RELEASE,
    )
