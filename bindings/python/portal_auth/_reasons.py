"""The reasons an error carries (SessionStorageFailure, SignInUnavailable, SignInClosed,
Unauthorized): the C ABI's stable PORTAL_AUTH_REASON_* numbers, as enums that print as their
names and have a sentence for the user. Loaded with the first such error, since enum costs
more to import than the rest of a client."""

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


class StorageFailureReason(Reason):
    """Which failure a SessionStorageFailure was, to choose what to tell the user. The values
    are the C ABI's PORTAL_AUTH_REASON_* numbers, stable."""

    KEYRING_LOCKED = 1
    """The keyring is locked: ask the user to unlock it."""
    NO_SECRET_SERVICE = 2
    """No Secret Service on the session bus, or no default (login) collection: install,
    start or set up a keyring (gnome-keyring, KeePassXC)."""
    NO_SESSION_BUS = 3
    """No D-Bus session bus to reach: the app runs outside a desktop session."""
    DBUS_FAILURE = 4
    """D-Bus or the Secret Service failed, or did not answer in time: try again."""
    LIBSECRET_MISSING = 5
    """libsecret could not be loaded: install it."""
    HOST_STORAGE_FAILED = 6
    """The storage object raised (or returned something other than str or None)."""
    ENTRY_NOT_CLEARED = 7
    """The stored entry cannot be decoded and deleting it failed: it is still stored, and the
    user is not reported signed out."""
    KEYRING_NEEDS_CONFIRMATION = 8
    """The keyring asks the user to confirm the access in a dialog (KeePassXC's access
    confirmation) and the client does not show keyring prompts (keyring_prompt_timeout), or
    nobody answered in time."""
    KEYRING_PROMPT_DISMISSED = 9
    """The user dismissed the keyring's dialog (a call cancelled while it waits is cancelled)."""
    KEYRING_ENCRYPTION_FAILED = 10
    """The keyring could not set up the encrypted transfer of secrets (KWallet without its
    encryption plugins): the keyring's installation needs fixing."""
    FILE_STORE_UNSAFE = 11
    """The file store's folder or file is not the user's alone (a symlink, another user's,
    open to others): fix its owner and mode (0700), or choose another folder."""
    FILE_STORE_FAILED = 12
    """The file store could not read, write or remove its file (a full disk, a read-only
    folder)."""


class SignInUnavailableReason(Reason):
    """Why a browser or magic-link sign-in, or the redirect channel, is not possible
    (SignInUnavailable.reason). The values are the C ABI's PORTAL_AUTH_REASON_* numbers,
    stable. Nothing was exchanged."""

    REDIRECT_NOT_LOOPBACK = 20
    """The redirect URL is not http://127.0.0.1:<port>/... ([::1] or localhost); no request was made."""
    PORT_IN_USE = 21
    """Another program listens on the redirect URL's port; no request was made."""
    LISTENER_FAILED = 22
    """The loopback listener could not start; no request was made."""
    NO_BROWSER = 23
    """No browser could be started ($BROWSER, xdg-open), or the opener given to
    set_browser_opener returned False: the error's `url` is the URL to show the user."""
    OPENER_FAILED = 24
    """The opener given to set_browser_opener raised (the exception is the error's __cause__)."""
    NO_RUNTIME_DIRECTORY = 25
    """The redirect channel: $XDG_RUNTIME_DIR is unset, missing or not a folder."""
    RUNTIME_DIRECTORY_UNSAFE = 26
    """The redirect channel: $XDG_RUNTIME_DIR, or the channels' folder in it, is not the
    user's alone (mode 0700), or the other end runs as another user."""
    CHANNEL_IN_USE = 27
    """The redirect channel: another instance already listens for this environment's redirects."""
    CHANNEL_FAILED = 28
    """The redirect channel's socket failed, or the running instance did not answer in time
    (it may still handle the URL)."""


class SignInClosedReason(Reason):
    """Why a sign-in's wait ended before its redirect came (SignInClosed.reason). The values
    are the C ABI's PORTAL_AUTH_REASON_* numbers, stable. Nothing was exchanged."""

    SIGN_IN_CANCELLED = 40
    """The call was cancelled (Ctrl-C, a cancelled task): start again when the user asks."""
    SIGN_IN_TIMED_OUT = 41
    """The sign-in's timeout passed before the browser or the email's link came back."""
    CLIENT_CLOSED = 42
    """The client was closed during the sign-in."""


class UnauthorizedReason(Reason):
    """What the user does after an Unauthorized (Unauthorized.reason), where the call can
    tell. The values are the C ABI's PORTAL_AUTH_REASON_* numbers, stable."""

    LINK_USED = 50
    """The redirect's grant was refused (handle_redirect, the sign_in_with_* calls): the link
    was already used, has expired, or is not Portal's. Request a new link."""
    TOTP_CODE_REJECTED = 51
    """verify_totp: the code was not accepted, and the step had not expired by the local
    clock. Ask for the code again and verify with the same step."""
    TOTP_STEP_EXPIRED = 52
    """verify_totp: the step's user_jwt had expired by the local clock
    (TotpRequiredResult.expires_at). Sign in again."""
