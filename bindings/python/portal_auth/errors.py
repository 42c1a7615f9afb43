"""The exceptions of portal_auth, one per error case of docs/protocol.md §10 and the C ABI's
codes. `str(error)` is the library's message, which never carries a secret.

The lowest layer of the package: it imports nothing else of it at run time (_error_handles
turns the library's error handles into these; the reasons they carry are the enums of
_reasons, named here in annotations only).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._reasons import (
        NetworkFailureReason,
        SignInClosedReason,
        SignInUnavailableReason,
        StorageFailureReason,
        UnauthorizedReason,
    )


class PortalAuthError(Exception):
    """Every error portal_auth raises."""

    def __init__(self, message: str) -> None:
        """An error whose `str()` is `message`."""
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
    nor in the repository's build output, nor in the system's library path."""


class InvalidArgument(PortalAuthError):
    """An argument or option is missing, blank or malformed; `name` says which, as Python
    spells it (`auth_environment_id`, `email`, ...)."""

    name: str
    """The argument or option."""

    def __init__(self, name: str, message: str | None = None) -> None:
        """The error of argument `name`; `message` defaults to a sentence naming it."""
        super().__init__(message or f"Invalid argument: {name}.")
        self.name = name


class MagicLinkNotConfigured(PortalAuthError):
    """send_magic_link needs the client's MagicLinkConfig."""

    def __init__(self, message: str = "Magic links are not configured on this client.") -> None:
        """The error, with the library's `message`."""
        super().__init__(message)


class AuthMethodUnavailable(PortalAuthError):
    """The environment does not allow `method`."""

    method: str
    """The method: an AuthMethod (a str enum, GOOGLE or APPLE) when the library raises it."""

    def __init__(self, method: str, message: str | None = None) -> None:
        """The error of `method`; `message` defaults to a sentence naming it."""
        self.method = method
        super().__init__(message or f"The auth method {method} is not enabled for this environment.")


class AuthenticationFailed(PortalAuthError):
    """The redirect reported a failed sign-in; `error` is its error parameter."""

    error: str
    """The redirect's `error` parameter, as sent."""

    def __init__(self, error: str, message: str | None = None) -> None:
        """The error of a redirect whose `error` parameter is `error`."""
        super().__init__(message or f"Authentication failed: {error}")
        self.error = error


class MalformedResponse(PortalAuthError):
    """Portal's answer to `path` lacked `missing` (None: the envelope itself was wrong)."""

    path: str
    """The endpoint's path."""
    missing: str | None
    """The field the answer lacked; None when its envelope itself was wrong."""

    def __init__(self, path: str, missing: str | None, message: str | None = None) -> None:
        """The error of an answer from `path` that lacked `missing`."""
        super().__init__(message or f"Malformed response from {path}.")
        self.path = path
        self.missing = missing


class InvalidGrantResponse(PortalAuthError):
    """The grant exchange answered neither a session nor a TOTP step."""

    def __init__(self, message: str = "The grant exchange returned an unusable response.") -> None:
        """The error, with the library's `message`."""
        super().__init__(message)


class InvalidUserJwt(PortalAuthError):
    """The userJwt of a TOTP step could not be read; `detail` says why."""

    detail: str
    """Why it could not be read (fixed text: it never quotes the userJwt)."""

    def __init__(self, detail: str, message: str | None = None) -> None:
        """The error, with the `detail` of what was wrong."""
        super().__init__(message or f"Invalid userJwt: {detail}")
        self.detail = detail


class SessionStorageFailure(PortalAuthError):
    """The session store failed; `reason` says which failure it was, `message` (also
    `str(error)`) what to do. Nothing stored was deleted for it."""

    message: str
    """What to do, in a sentence of the library's."""
    reason: StorageFailureReason
    """Which failure it was."""

    def __init__(self, message: str, reason: StorageFailureReason) -> None:
        """The failure `reason`, with the library's `message`."""
        super().__init__(message)
        self.message = message
        self.reason = reason


class AccountAbstractionUnavailable(PortalAuthError):
    """Portal refused account abstraction for this environment; `message` is its text,
    `str(error)` the library's sentence around it."""

    message: str
    """Portal's own text (cut to 200 characters)."""

    def __init__(self, message: str, description: str | None = None) -> None:
        """The error of Portal's `message`; `description`, the library's sentence around it,
        is `str(error)` (`message` when None)."""
        super().__init__(description or message)
        self.message = message


class RateLimited(PortalAuthError):
    """Too many magic links sent; wait before sending another. `retry_after` is the delay
    Portal asked for, in seconds (its Retry-After), or None; nothing is resent."""

    retry_after: int | None
    """The server's delay in seconds; None when it named none."""

    def __init__(self, message: str = "Too many requests; try again later.", retry_after: int | None = None) -> None:
        """The error, with the library's `message` and the server's delay."""
        super().__init__(message)
        self.retry_after = retry_after


class TotpQrUnavailable(PortalAuthError):
    """No QR code can be made from this otpauth link."""

    def __init__(self, message: str = "No QR code can be made for this TOTP link.") -> None:
        """The error, with the library's `message`."""
        super().__init__(message)


class SessionInvalidated(PortalAuthError):
    """The session was invalidated; sign in again."""

    def __init__(self, message: str = "The session was invalidated.") -> None:
        """The error, with the library's `message`."""
        super().__init__(message)


class Cancelled(PortalAuthError):
    """The call was cancelled before its request was sent."""

    def __init__(self, message: str = "The call was cancelled.") -> None:
        """The error, with the library's `message`."""
        super().__init__(message)


class RequestError(PortalAuthError):
    """A request failed: `status` is the HTTP status, or None when no response arrived
    (connection refused or dropped, timeout). `body` is the server's reason for an error
    status, an excerpt of the response body for the developer (such as
    '{"error":"redirectUrl is not allow-listed"}'), or None: see the README for what it may
    contain. It is never in `str(error)`."""

    status: int | None
    """The HTTP status; None when no response arrived."""
    body: str | None
    """The server's reason, for the developer; see the class."""
    retry_after: int | None
    """The delay the server asked for before another attempt (its Retry-After), in seconds;
    None when it named none. The library never retries by itself."""

    def __init__(self, status: int | None, message: str | None = None, body: str | None = None,
                 retry_after: int | None = None) -> None:
        """The error of an answer with `status` (None: none came), `body` and `retry_after`."""
        super().__init__(message or (f"HTTP status {status}." if status is not None else "No response."))
        self.status = status
        self.body = body
        self.retry_after = retry_after


class NetworkError(RequestError):
    """No usable answer came: `reason` says why (an untrusted certificate, a proxy asking
    for credentials, a name that does not resolve, a timeout...), so that the app can tell
    "fix your settings" from "try again later"; None for a reason of a newer library.
    `status` is None. docs/network.md has what each reason means."""

    reason: NetworkFailureReason | None
    """Why no answer came."""

    def __init__(self, message: str | None = None, reason: NetworkFailureReason | None = None) -> None:
        """The error, with the library's `message` and the `reason`, when known."""
        super().__init__(None, message)
        self.reason = reason


class Unauthorized(RequestError):
    """HTTP 401: the environment, the grant, the code or the session is not accepted.
    `reason` says what the user does next where the call can tell (a redirect's used link, a
    TOTP code to retype, a TOTP step expired), else None."""

    reason: UnauthorizedReason | None
    """What the user does next; None for a call that cannot tell (get_methods, ...)."""

    def __init__(self, message: str | None = None, reason: UnauthorizedReason | None = None) -> None:
        """The error, with the library's `message` and the `reason`, when known."""
        super().__init__(401, message or "Unauthorized (HTTP 401).")
        self.reason = reason


class SignInError(PortalAuthError):
    """A browser sign-in did not complete; `code` is one of POPUP_CLOSED, POPUP_UNAVAILABLE,
    SIGN_IN_ALREADY_IN_PROGRESS, CALLBACK_INCOMPLETE."""

    code: str = ""
    """The web SDK's name of the case."""

    def __init__(self, message: str | None = None) -> None:
        """The error, with the library's `message`."""
        super().__init__(message or f"Sign-in failed: {self.code}.")


class SignInClosed(SignInError):
    """The sign-in ended before the browser came back; `reason` says how: its timeout,
    Ctrl-C or a cancelled task, or close(). Nothing was exchanged."""

    code = "POPUP_CLOSED"
    reason: SignInClosedReason
    """How the sign-in's wait ended."""

    def __init__(self, message: str, reason: SignInClosedReason) -> None:
        """The ending `reason`, with the library's `message`."""
        super().__init__(message)
        self.reason = reason


class SignInUnavailable(SignInError):
    """`reason` says why no browser sign-in is possible here."""

    code = "POPUP_UNAVAILABLE"
    reason: SignInUnavailableReason
    """Why no browser sign-in is possible."""
    url: str | None
    """For NO_BROWSER from sign_in_with_google/apple: the URL no browser could open, to show
    the user (to open elsewhere, then paste where the browser landed into handle_redirect);
    else None. Not part of str(error)."""

    def __init__(self, message: str, reason: SignInUnavailableReason, url: str | None = None) -> None:
        """The failure `reason`, with the library's `message` and the unopened `url`."""
        super().__init__(message)
        self.reason = reason
        self.url = url


class SignInInProgress(SignInError):
    """Another browser sign-in of this client is under way; nothing was sent."""

    code = "SIGN_IN_ALREADY_IN_PROGRESS"


class SignInCallbackIncomplete(SignInError):
    """The browser came back to the redirect URL without a usable grant."""

    code = "CALLBACK_INCOMPLETE"
