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

# The codes whose error carries no field but its message.
_SIMPLE: dict[int, type[PortalAuthError]] = {
    _native.E_MAGIC_LINK_NOT_CONFIGURED: MagicLinkNotConfigured,
    _native.E_INVALID_GRANT_RESPONSE: InvalidGrantResponse,
    _native.E_RATE_LIMITED: RateLimited,
    _native.E_TOTP_QR_UNAVAILABLE: TotpQrUnavailable,
    _native.E_SESSION_INVALIDATED: SessionInvalidated,
    _native.E_CANCELLED: Cancelled,
    _native.E_SIGN_IN_CLOSED: SignInClosed,
    _native.E_SIGN_IN_IN_PROGRESS: SignInInProgress,
    _native.E_SIGN_IN_CALLBACK_INCOMPLETE: SignInCallbackIncomplete,
}



def from_handle(error: int) -> PortalAuthError:
    """The exception for a borrowed portal_auth_error (read at once: it dies with its callback)."""
    lib = _native.lib()
    code = int(lib.portal_auth_error_code(error))
    message = _native.required_text(lib.portal_auth_error_message(error))

    def field(accessor: str) -> str:
        return _native.required_text(getattr(lib, accessor)(error))

    if code in _SIMPLE:
        return _SIMPLE[code](message)
    if code == _native.E_INVALID_ARGUMENT:
        return InvalidArgument(field("portal_auth_error_name"), message)
    if code == _native.E_AUTH_METHOD_UNAVAILABLE:
        return AuthMethodUnavailable(_method(field("portal_auth_error_method")), message)
    if code == _native.E_AUTHENTICATION_FAILED:
        return AuthenticationFailed(field("portal_auth_error_detail"), message)
    if code == _native.E_MALFORMED_RESPONSE:
        missing = _native.text(lib.portal_auth_error_missing(error))
        return MalformedResponse(field("portal_auth_error_path"), missing, message)
    if code == _native.E_INVALID_USER_JWT:
        return InvalidUserJwt(field("portal_auth_error_detail"), message)
    if code == _native.E_SESSION_STORAGE_FAILURE:
        from ._reasons import StorageFailureReason

        reason = int(lib.portal_auth_error_reason(error))
        if reason in StorageFailureReason.__members__.values():
            return SessionStorageFailure(message, StorageFailureReason(reason))
    if code == _native.E_ACCOUNT_ABSTRACTION_UNAVAILABLE:
        return AccountAbstractionUnavailable(field("portal_auth_error_detail"), message)
    if code == _native.E_UNAUTHORIZED:
        return Unauthorized(message)
    if code == _native.E_HTTP_STATUS:
        body = _native.text(lib.portal_auth_error_body(error))
        return RequestError(int(lib.portal_auth_error_http_status(error)), message, body)
    if code == _native.E_NETWORK:
        return RequestError(None, message)
    if code == _native.E_SIGN_IN_UNAVAILABLE:
        from ._reasons import SignInUnavailableReason

        reason = int(lib.portal_auth_error_reason(error))
        if reason in SignInUnavailableReason.__members__.values():
            return SignInUnavailable(message, SignInUnavailableReason(reason))
    # E_INTERNAL, or a code or a reason of a newer library than this binding.
    return PortalAuthError(message)


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
