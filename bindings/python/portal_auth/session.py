"""PortalSession: a signed-in user, over a reference-counted portal_auth_session handle."""

from __future__ import annotations

import _thread
import _weakref  # weakref.ref itself: the weakref module costs more to import than this one
import ctypes

from . import _calls, _error_handles, _native, _threads


class _Held(_weakref.ref["PortalSession"]):
    """The binding's reference to a live session object, under the address of the library's
    session; when the object goes, its callback releases the library's session. One weak
    reference does both jobs: a completion builds a session on the call's path, where
    every Python call costs."""

    __slots__ = ("borrowed", "handle")
    borrowed: int
    handle: int


_live: dict[int, _Held] = {}
# Reentrant: a collection that runs while _of holds it may free a session, whose _gone takes it.
_live_lock = _thread.RLock()


def _forked() -> None:
    """In a forked child the parent's sessions are the parent's: a session the child's calls
    return is a new object (the library's handles made before the fork are refused there)."""
    global _live_lock
    _live_lock = _thread.RLock()
    for held in _live.values():
        held.handle = 0  # the parent's to release
    _live.clear()


_threads.after_fork(_forked)


def _gone(held: _Held) -> None:
    """The session object is gone (or exit releases it): lets the library's session go once."""
    with _live_lock:
        if _live.get(held.borrowed) is held:
            del _live[held.borrowed]
        handle, held.handle = held.handle, 0
    if handle:
        _native.lib().portal_auth_session_release(handle)


def _release_all() -> None:
    """At exit, once the calls exit waits for have ended: releases every session still held,
    so that the library can let its clients' storage go."""
    with _live_lock:
        held = list(_live.values())
    for each in held:
        _gone(each)


_threads.at_exit(_release_all)


class PortalSession:
    """A signed-in user. One user's session is one object: a redirect replayed from the
    client's memory returns this very object again. Its repr shows only the end_user_id."""

    __slots__ = ("_handle", "end_user_id", "__weakref__")

    _handle: int
    end_user_id: str
    """The user's id: never secret, what to log and key per-user state on."""

    def __init__(self) -> None:
        """Refused: sessions come from the sign-in calls and restore_session."""
        raise TypeError("PortalSession objects come from sign-in and restore_session calls")

    @classmethod
    def _of(cls, borrowed: int) -> PortalSession:
        """The session object of a borrowed handle: the live one, else a new one holding a
        reference of its own."""
        with _live_lock:
            held = _live.get(borrowed)
            session = None if held is None else held()
            if session is None:
                lib = _native.lib()
                session = object.__new__(cls)
                session._handle = int(lib.portal_auth_session_retain(borrowed))
                session.end_user_id = _native.required_text(lib.portal_auth_session_end_user_id(borrowed))
                held = _Held(session, _gone)
                held.borrowed = borrowed
                held.handle = session._handle
                _live[borrowed] = held
            return session

    def get_token(self) -> str:
        """The Client Session Token, for Portal's API. A secret: never log it.
        Raises SessionInvalidated once the session is invalidated."""
        lib = _native.lib()
        token = ctypes.c_void_p()
        error = ctypes.c_void_p()
        code = lib.portal_auth_session_copy_token(self._handle, ctypes.byref(token), ctypes.byref(error))
        _error_handles.raise_from_out(code, error)
        return _native.take_string(token)

    def invalidate(self) -> None:
        """Forgets the token at once, then deletes the persisted copy if it is still this
        session's. Raises SessionStorageFailure when the store fails (invalidating again
        retries the delete)."""
        _calls.blocking(_calls.Start(_calls.DONE, self._start_invalidate))

    async def invalidate_async(self) -> None:
        """invalidate(), as a coroutine for asyncio programs: completed on the awaiting loop."""
        from . import _awaited  # asyncio's: loaded by the first awaited call

        await _awaited.awaiting(_calls.Start(_calls.DONE, self._start_invalidate))

    def _start_invalidate(self, callback: object, key: int, out_call: ctypes.c_void_p) -> int:
        return int(_native.lib().portal_auth_session_invalidate(self._handle, callback, key, ctypes.byref(out_call)))

    def __copy__(self) -> PortalSession:
        """The session itself."""
        return self  # one session, one object: a copy would share the handle without owning it

    def __deepcopy__(self, memo: dict[int, object]) -> PortalSession:
        """The session itself."""
        return self

    def __reduce__(self) -> str | tuple[object, ...]:
        """Refused: a session lives in this process only."""
        raise TypeError("a PortalSession lives in this process only; persist it through the client's storage")

    def __repr__(self) -> str:
        """Only the end_user_id: the token is a secret."""
        return f"PortalSession(end_user_id={self.end_user_id!r})"
