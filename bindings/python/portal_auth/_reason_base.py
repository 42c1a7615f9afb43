"""What every reason enum of _reasons is: the C ABI's stable PORTAL_AUTH_REASON_* number as an
int that prints as its name, with the library's sentence for the user. Loaded with the first
error that carries a reason, since enum costs more to import than the rest of a client."""

from __future__ import annotations

import enum

from . import _native


class Reason(enum.IntEnum):
    """A reason: an int (the C ABI's number, stable) that prints as its name,
    `KEYRING_LOCKED`, in str(), f-strings and format(); `user_message` is the library's
    one-line sentence to show the user as it is (the name keys an app's own translations)."""

    def __str__(self) -> str:
        return self.name

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    @property
    def user_message(self) -> str:
        """A one-line sentence for the user, in English, that says what to do; never a
        detail of the error (those are in str(error), for the developer)."""
        return _native.required_text(_native.lib().portal_auth_reason_user_message(self.value))
