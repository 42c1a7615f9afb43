"""The exceptions of portal_auth, one per error case of docs/protocol.md §10 and the C ABI's
codes. `str(error)` is the library's message, which never carries a secret."""

from __future__ import annotations

import ctypes
import enum
from typing import TYPE_CHECKING

from . import _native

if TYPE_CHECKING:
    from .results import AuthMethod


class PortalAuthError(Exception):
    """Every error portal_auth raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def __reduce__(self) -> str | tuple[object, ...]:
        # The fields live in attributes, the message in args: both travel (pickle, copy).
        return _rebuild, (type(self), str(self), dict(self.__dict__))


def _rebuild(kind: type[PortalAuthError], message: str, fields: dict[str, object]) -> PortalAuthError:
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    error.__dict__.update(fields)
    return error


class LibraryNotFound(PortalAuthError, OSError):
    """libportalauth.so.0 is neither where PORTAL_AUTH_LIBRARY points, nor beside the package,
    nor in the repository's build output."""


class InvalidArgument(PortalAuthError):
    """An argument or option is missing, blank or malformed; `name` says which."""

    def __init__(self, name: str, message: str | None = None) -> None:
        super().__init__(message or f"Invalid argument: {name}.")
        self.name = name


class MagicLinkNotConfigured(PortalAuthError):
    """send_magic_link needs the client's MagicLinkConfig."""

    def __init__(self, message: str = "Magic links are not configured on this client.") -> None:
        super().__init__(message)


class AuthMethodUnavailable(PortalAuthError):
    """The environment does not allow `method`."""

    def __init__(self, method: AuthMethod | str, message: str | None = None) -> None:
        from .results import AuthMethod  # results imports this module

        self.method = AuthMethod(method)
        super().__init__(message or f"The auth method {self.method.value} is not enabled for this environment.")


class AuthenticationFailed(PortalAuthError):
    """The redirect reported a failed sign-in; `error` is its error parameter."""

    def __init__(self, error: str, message: str | None = None) -> None:
        super().__init__(message or f"Authentication failed: {error}")
        self.error = error


class MalformedResponse(PortalAuthError):
    """Portal's answer to `path` lacked `missing` (None: the envelope itself was wrong)."""

    def __init__(self, path: str, missing: str | None, message: str | None = None) -> None:
        super().__init__(message or f"Malformed response from {path}.")
        self.path = path
        self.missing = missing


class InvalidGrantResponse(PortalAuthError):
    """The grant exchange answered neither a session nor a TOTP step."""

    def __init__(self, message: str = "The grant exchange returned an unusable response.") -> None:
        super().__init__(message)


class InvalidUserJwt(PortalAuthError):
    """The userJwt of a TOTP step could not be read; `detail` says why."""

    def __init__(self, detail: str, message: str | None = None) -> None:
        super().__init__(message or f"Invalid userJwt: {detail}")
        self.detail = detail


class StorageFailureReason(enum.IntEnum):
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


class SignInUnavailableReason(enum.IntEnum):
    """Why a browser or magic-link sign-in, or the redirect channel between an app's instances,
    is not possible (SignInUnavailable.reason). The values are the C ABI's
    PORTAL_AUTH_REASON_* numbers, stable. Nothing was exchanged."""

    REDIRECT_NOT_LOOPBACK = 20
    """The redirect URL is not http://127.0.0.1:<port>/... ([::1] or localhost); no request was made."""
    PORT_IN_USE = 21
    """Another program listens on the redirect URL's port; no request was made."""
    LISTENER_FAILED = 22
    """The loopback listener could not start; no request was made."""
    NO_BROWSER = 23
    """No browser could be started ($BROWSER, xdg-open): login_with_google/apple still give the URL."""
    OPENER_FAILED = 24
    """The opener given to set_browser_opener raised."""
    NO_RUNTIME_DIRECTORY = 25
    """The redirect channel: $XDG_RUNTIME_DIR is unset, missing or not a folder."""
    RUNTIME_DIRECTORY_UNSAFE = 26
    """The redirect channel: $XDG_RUNTIME_DIR, or the channels' folder in it, is not the user's
    alone (mode 0700), or the process at the other end is another user's."""
    CHANNEL_IN_USE = 27
    """The redirect channel: another instance of the app listens for this environment's redirects."""
    CHANNEL_FAILED = 28
    """The redirect channel failed, or the running instance did not answer in time (it may
    still handle the URL)."""


class SessionStorageFailure(PortalAuthError):
    """The session store failed; `reason` says which failure it was, `message` (also
    `str(error)`) what to do. Nothing stored was deleted for it."""

    def __init__(self, message: str, reason: StorageFailureReason) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


class AccountAbstractionUnavailable(PortalAuthError):
    """Portal refused account abstraction for this environment; `message` is its text,
    `str(error)` the library's sentence around it."""

    def __init__(self, message: str, description: str | None = None) -> None:
        super().__init__(description or message)
        self.message = message


class RateLimited(PortalAuthError):
    """Too many magic links sent; wait before sending another."""

    def __init__(self, message: str = "Too many requests; try again later.") -> None:
        super().__init__(message)


class TotpQrUnavailable(PortalAuthError):
    """No QR code can be made from this otpauth link at this scale."""

    def __init__(self, message: str = "No QR code can be made for this TOTP link.") -> None:
        super().__init__(message)


class SessionInvalidated(PortalAuthError):
    """The session was invalidated; sign in again."""

    def __init__(self, message: str = "The session was invalidated.") -> None:
        super().__init__(message)


class Cancelled(PortalAuthError):
    """The call was cancelled before its request was sent."""

    def __init__(self, message: str = "The call was cancelled.") -> None:
        super().__init__(message)


class RequestError(PortalAuthError):
    """A request failed: `status` is the HTTP status, or None when no response arrived
    (connection refused or dropped, timeout). `body` is the server's reason for an error
    status, an excerpt of the response body for the developer (such as
    '{"error":"redirectUrl is not allow-listed"}'), or None: see the README for what it may
    contain. It is never in `str(error)`."""

    def __init__(self, status: int | None, message: str | None = None, body: str | None = None) -> None:
        super().__init__(message or (f"HTTP status {status}." if status is not None else "No response."))
        self.status = status
        self.body = body


class Unauthorized(RequestError):
    """HTTP 401: the environment or session is not accepted."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(401, message or "Unauthorized (HTTP 401).")


class SignInError(PortalAuthError):
    """A browser sign-in did not complete; `code` is one of POPUP_CLOSED, POPUP_UNAVAILABLE,
    SIGN_IN_ALREADY_IN_PROGRESS, CALLBACK_INCOMPLETE."""

    code: str = ""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or f"Sign-in failed: {self.code}.")


class SignInClosed(SignInError):
    code = "POPUP_CLOSED"


class SignInUnavailable(SignInError):
    """`reason` says why no browser sign-in is possible here."""

    code = "POPUP_UNAVAILABLE"

    def __init__(self, message: str, reason: SignInUnavailableReason) -> None:
        super().__init__(message)
        self.reason = reason


class SignInInProgress(SignInError):
    code = "SIGN_IN_ALREADY_IN_PROGRESS"


class SignInCallbackIncomplete(SignInError):
    code = "CALLBACK_INCOMPLETE"


_SIMPLE: dict[int, type[PortalAuthError]] = {
    2: MagicLinkNotConfigured,
    6: InvalidGrantResponse,
    10: RateLimited,
    11: TotpQrUnavailable,
    30: SessionInvalidated,
    31: Cancelled,
    40: SignInClosed,
    42: SignInInProgress,
    43: SignInCallbackIncomplete,
}


_STORAGE_REASONS = frozenset(StorageFailureReason)
_SIGN_IN_REASONS = frozenset(SignInUnavailableReason)


def from_handle(error: int) -> PortalAuthError:
    """The exception for a borrowed portal_auth_error (read at once: it dies with its callback)."""
    lib = _native.lib()
    code = int(lib.portal_auth_error_code(error))
    message = _native.required_text(lib.portal_auth_error_message(error))

    def field(accessor: str) -> str:
        return _native.required_text(getattr(lib, accessor)(error))

    if code in _SIMPLE:
        return _SIMPLE[code](message)
    if code == 1:
        return InvalidArgument(field("portal_auth_error_name"), message)
    if code == 3:
        return AuthMethodUnavailable(field("portal_auth_error_method"), message)
    if code == 4:
        return AuthenticationFailed(field("portal_auth_error_detail"), message)
    if code == 5:
        missing = _native.text(lib.portal_auth_error_missing(error))
        return MalformedResponse(field("portal_auth_error_path"), missing, message)
    if code == 7:
        return InvalidUserJwt(field("portal_auth_error_detail"), message)
    if code == 8 and (reason := int(lib.portal_auth_error_reason(error))) in _STORAGE_REASONS:
        return SessionStorageFailure(message, StorageFailureReason(reason))
    if code == 9:
        return AccountAbstractionUnavailable(field("portal_auth_error_detail"), message)
    if code == 20:
        return Unauthorized(message)
    if code == 21:
        body = _native.text(lib.portal_auth_error_body(error))
        return RequestError(int(lib.portal_auth_error_http_status(error)), message, body)
    if code == 22:
        return RequestError(None, message)
    if code == 41 and (reason := int(lib.portal_auth_error_reason(error))) in _SIGN_IN_REASONS:
        return SignInUnavailable(message, SignInUnavailableReason(reason))
    # A code, or a reason, of a newer library than this binding.
    return PortalAuthError(message)


def from_code(code: int, name: str) -> PortalAuthError:
    """The exception for a code a starting call returned (no error handle comes with it)."""
    if code == 1:
        return InvalidArgument(name)
    return _SIMPLE.get(code, PortalAuthError)(f"portal-auth refused the call (code {code}).")


def raise_from_out(code: int, out_error: ctypes.c_void_p) -> None:
    """Raises for a synchronous call's code and owned `*out_error` (which it frees)."""
    if code == _native.OK:
        return
    lib = _native.lib()
    try:
        if out_error.value:
            raise from_handle(out_error.value)
        raise from_code(code, "")
    finally:
        lib.portal_auth_error_free(out_error)
