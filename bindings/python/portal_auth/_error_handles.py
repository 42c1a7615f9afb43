"""The library's errors as exceptions: a portal_auth_error handle (lent to a callback, or
owned through an out_error) or a bare code read into the exception of its case, with the
case's fields. Each code of portal_auth.h has its case here. The enums of a reason or a
method are loaded by the first error that carries one."""

from __future__ import annotations

import ctypes

from . import _native
from .errors import (
    AccountAbstractionUnavailable,
    AuthenticationFailed,
    AuthMethodUnavailable,
    Cancelled,
    InvalidArgument,
    InvalidGrantResponse,
    InvalidUserJwt,
    MagicLinkNotConfigured,
    MalformedResponse,
    NetworkError,
    PortalAuthError,
    RateLimited,
    RequestError,
    SessionInvalidated,
    SessionStorageFailure,
    SignInCallbackIncomplete,
    SignInClosed,
    SignInInProgress,
    SignInUnavailable,
    TotpQrUnavailable,
    Unauthorized,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# The codes whose error carries no field but its message.
_SIMPLE: dict[int, type[PortalAuthError]] = {
    _native.E_MAGIC_LINK_NOT_CONFIGURED: MagicLinkNotConfigured,
    _native.E_INVALID_GRANT_RESPONSE: InvalidGrantResponse,
    _native.E_TOTP_QR_UNAVAILABLE: TotpQrUnavailable,
    _native.E_SESSION_INVALIDATED: SessionInvalidated,
    _native.E_CANCELLED: Cancelled,
    _native.E_SIGN_IN_IN_PROGRESS: SignInInProgress,
    _native.E_SIGN_IN_CALLBACK_INCOMPLETE: SignInCallbackIncomplete,
}



class _Fields:
    """The fields of a borrowed error handle, read on demand."""

    __slots__ = ("lib", "error")

    def __init__(self, lib: ctypes.CDLL, error: int) -> None:
        self.lib, self.error = lib, error

    def text(self, field: str) -> str:
        return _native.required_text(getattr(self.lib, f"portal_auth_error_{field}")(self.error))

    def optional(self, field: str) -> str | None:
        return _native.text(getattr(self.lib, f"portal_auth_error_{field}")(self.error))

    def number(self, field: str) -> int:
        return int(getattr(self.lib, f"portal_auth_error_{field}")(self.error))


def _storage_failure(fields: _Fields, message: str) -> PortalAuthError:
    from ._reasons import StorageFailureReason

    reason = fields.number("reason")
    if reason not in StorageFailureReason.__members__.values():  # a reason of a newer library
        return PortalAuthError(message)
    return SessionStorageFailure(message, StorageFailureReason(reason))


def _sign_in_unavailable(fields: _Fields, message: str) -> PortalAuthError:
    from ._reasons import SignInUnavailableReason

    reason = fields.number("reason")
    if reason not in SignInUnavailableReason.__members__.values():
        return PortalAuthError(message)
    return SignInUnavailable(message, SignInUnavailableReason(reason), fields.optional("url"))


def _unauthorized(fields: _Fields, message: str) -> PortalAuthError:
    from ._reasons import UnauthorizedReason

    reason = fields.number("reason")
    # None for a call that cannot tell, and for a reason of a newer library.
    known = reason in UnauthorizedReason.__members__.values()
    return Unauthorized(message, UnauthorizedReason(reason) if known else None)


def _network(fields: _Fields, message: str) -> PortalAuthError:
    from ._reasons import NetworkFailureReason

    reason = fields.number("reason")
    known = reason in NetworkFailureReason.__members__.values()
    return NetworkError(message, NetworkFailureReason(reason) if known else None)


def _retry_after(fields: _Fields) -> int | None:
    seconds = fields.number("retry_after")
    return seconds if seconds >= 0 else None


def _sign_in_closed(fields: _Fields, message: str) -> PortalAuthError:
    from ._reasons import SignInClosedReason

    reason = fields.number("reason")
    if reason not in SignInClosedReason.__members__.values():
        return PortalAuthError(message)
    return SignInClosed(message, SignInClosedReason(reason))


# The codes whose error carries fields: how to read each into its exception.
_WITH_FIELDS: dict[int, Callable[[_Fields, str], PortalAuthError]] = {
    _native.E_INVALID_ARGUMENT: lambda f, message: InvalidArgument(f.text("name"), message),
    _native.E_AUTH_METHOD_UNAVAILABLE: lambda f, message: AuthMethodUnavailable(_method(f.text("method")), message),
    _native.E_AUTHENTICATION_FAILED: lambda f, message: AuthenticationFailed(f.text("detail"), message),
    _native.E_MALFORMED_RESPONSE: lambda f, message: MalformedResponse(f.text("path"), f.optional("missing"), message),
    _native.E_INVALID_USER_JWT: lambda f, message: InvalidUserJwt(f.text("detail"), message),
    _native.E_SESSION_STORAGE_FAILURE: _storage_failure,
    _native.E_ACCOUNT_ABSTRACTION_UNAVAILABLE: lambda f, message: AccountAbstractionUnavailable(f.text("detail"), message),
    _native.E_UNAUTHORIZED: _unauthorized,
    _native.E_RATE_LIMITED: lambda f, message: RateLimited(message, _retry_after(f)),
    _native.E_HTTP_STATUS: lambda f, message: RequestError(f.number("http_status"), message, f.optional("body"),
                                                           _retry_after(f)),
    _native.E_NETWORK: _network,
    _native.E_SIGN_IN_UNAVAILABLE: _sign_in_unavailable,
    _native.E_SIGN_IN_CLOSED: _sign_in_closed,
}


def from_handle(error: int) -> PortalAuthError:
    """The exception for a borrowed portal_auth_error (read at once: it dies with its callback)."""
    lib = _native.lib()
    code = int(lib.portal_auth_error_code(error))
    message = _native.required_text(lib.portal_auth_error_message(error))
    if code in _SIMPLE:
        return _SIMPLE[code](message)
    read = _WITH_FIELDS.get(code)
    # E_INTERNAL, or a code of a newer library than this binding.
    return PortalAuthError(message) if read is None else read(_Fields(lib, error), message)


def _method(name: str) -> str:
    """The AuthMethod of a method's name; the name itself for a method of a newer library."""
    from ._auth_method import AuthMethod

    try:
        return AuthMethod(name)
    except ValueError:
        return name


def from_code(code: int, name: str) -> PortalAuthError:
    """The exception for a code a starting call returned (no error handle comes with it)."""
    if code == _native.E_INVALID_ARGUMENT:
        return InvalidArgument(name)
    return _SIMPLE.get(code, PortalAuthError)(f"portal-auth refused the call (code {code}).")


def check(error: int | None) -> None:
    """Raises the exception of a borrowed error handle, if any."""
    if error:
        raise from_handle(error)


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
