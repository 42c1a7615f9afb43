"""The types of the `storage` parameter: SessionStore, the protocol of a store of the
application's, and Storage, everything `storage` accepts. Loaded only when a program asks for
either by name (`from portal_auth import SessionStore`), since it imports typing."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

__all__ = ["SessionStore", "Storage"]


@runtime_checkable
class SessionStore(Protocol):
    """A store of the application's for the session of one environment: one opaque string.

    The library calls it on a thread of its own, one call at a time per environment, keeps
    the string opaque, and applies the fault mapping itself: an exception from a method is
    a transient SessionStorageFailure (reason HOST_STORAGE_FAILED; nothing is deleted), and
    a value that does not decode (an empty string included) is deleted and reads as no
    session."""

    def get(self) -> str | None:
        """The stored string, or None when nothing is stored."""
        ...

    def set(self, raw: str) -> None:
        """Stores `raw`, replacing what was stored."""
        ...

    def delete(self) -> None:
        """Deletes what is stored; deleting nothing is a success."""
        ...


Storage = None | Literal["memory", "file"] | SessionStore
"""Where a client keeps the session: None (the desktop keyring), "memory" (this process
only, forgotten at exit), "file" (a plain file per application and environment, not
encrypted, for machines with no keyring), or a SessionStore of the application's."""
