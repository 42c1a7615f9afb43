"""Portal's Client Auth for Python on Linux desktops: sign users in by magic link, Google or
Apple, with TOTP two-factor, and keep their session in the desktop keyring.

    from portal_auth import PortalAuth, MagicLinkConfig

    with PortalAuth(auth_environment_id="...", redirect_url="myapp://auth/callback",
                    magic_link=MagicLinkConfig(from_email="...", template_id="...")) as auth:
        auth.send_magic_link("user@example.com")

A thin layer over libportalauth.so.0 (ctypes, standard library only). `AsyncPortalAuth` has
the same calls as coroutines. The library's log lines go to the `portal_auth` logger. For
offline development, the package portal-auth-emulator serves Portal's API locally.

Every name below is importable from here. Each is loaded with the module that defines it
when a program first names it, so that importing the package costs only what is used.
"""

from __future__ import annotations

__version__ = "0.1.0"
"""The package's version: the version of the library it carries (PORTAL_AUTH_VERSION_STRING)."""

# Where each public name is defined.
_MODULES = {
    "AsyncPortalAuth": "client",
    "PortalAuth": "client",
    "AccountAbstractionUnavailable": "errors",
    "AuthenticationFailed": "errors",
    "AuthMethodUnavailable": "errors",
    "Cancelled": "errors",
    "InvalidArgument": "errors",
    "InvalidGrantResponse": "errors",
    "InvalidUserJwt": "errors",
    "LibraryNotFound": "errors",
    "MagicLinkNotConfigured": "errors",
    "MalformedResponse": "errors",
    "NetworkError": "errors",
    "PortalAuthError": "errors",
    "RateLimited": "errors",
    "RequestError": "errors",
    "SessionInvalidated": "errors",
    "SessionStorageFailure": "errors",
    "SignInCallbackIncomplete": "errors",
    "SignInClosed": "errors",
    "SignInError": "errors",
    "SignInInProgress": "errors",
    "SignInUnavailable": "errors",
    "TotpQrUnavailable": "errors",
    "Unauthorized": "errors",
    "NetworkFailureReason": "_reasons",
    "SignInClosedReason": "_reasons",
    "SignInUnavailableReason": "_reasons",
    "StorageFailureReason": "_reasons",
    "UnauthorizedReason": "_reasons",
    "AuthMethod": "_auth_method",
    "AuthenticatedResult": "results",
    "AuthMethodsResult": "results",
    "AuthorizeUrlResult": "results",
    "MagicLinkConfig": "results",
    "TotpRequiredResult": "results",
    "PortalSession": "session",
    "AsyncRedirectListener": "redirects",
    "Redirect": "redirects",
    "RedirectListener": "redirects",
    "RedirectForwarding": "_forwarding",
    "SessionStore": "_session_store",
    "Storage": "_session_store",
    "totp_qr_code_matrix": "totp",
    "totp_qr_code_png": "totp",
    "totp_qr_code_svg": "totp",
    "totp_qr_code_terminal": "totp",
    "totp_secret": "totp",
    "normalize_totp_code": "totp",
}

__all__ = [
    "AccountAbstractionUnavailable",
    "AsyncPortalAuth",
    "AsyncRedirectListener",
    "AuthenticatedResult",
    "AuthenticationFailed",
    "AuthMethod",
    "AuthMethodsResult",
    "AuthMethodUnavailable",
    "AuthorizeUrlResult",
    "Cancelled",
    "InvalidArgument",
    "InvalidGrantResponse",
    "InvalidUserJwt",
    "LibraryNotFound",
    "MagicLinkConfig",
    "MagicLinkNotConfigured",
    "MalformedResponse",
    "NetworkError",
    "NetworkFailureReason",
    "normalize_totp_code",
    "PortalAuth",
    "PortalAuthError",
    "PortalSession",
    "RateLimited",
    "Redirect",
    "RedirectForwarding",
    "RedirectListener",
    "RequestError",
    "SessionInvalidated",
    "SessionStorageFailure",
    "SessionStore",
    "SignInCallbackIncomplete",
    "SignInClosed",
    "SignInClosedReason",
    "SignInError",
    "SignInInProgress",
    "SignInUnavailable",
    "SignInUnavailableReason",
    "Storage",
    "StorageFailureReason",
    "totp_qr_code_matrix",
    "totp_qr_code_png",
    "totp_qr_code_svg",
    "totp_qr_code_terminal",
    "totp_secret",
    "TotpQrUnavailable",
    "TotpRequiredResult",
    "Unauthorized",
    "UnauthorizedReason",
    "__version__",
]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._auth_method import AuthMethod
    from ._forwarding import RedirectForwarding
    from ._reasons import (
        NetworkFailureReason,
        SignInClosedReason,
        SignInUnavailableReason,
        StorageFailureReason,
        UnauthorizedReason,
    )
    from ._session_store import SessionStore, Storage
    from .client import AsyncPortalAuth, PortalAuth
    from .errors import (
        AccountAbstractionUnavailable,
        AuthenticationFailed,
        AuthMethodUnavailable,
        Cancelled,
        InvalidArgument,
        InvalidGrantResponse,
        InvalidUserJwt,
        LibraryNotFound,
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
        SignInError,
        SignInInProgress,
        SignInUnavailable,
        TotpQrUnavailable,
        Unauthorized,
    )
    from .results import (
        AuthenticatedResult,
        AuthMethodsResult,
        AuthorizeUrlResult,
        MagicLinkConfig,
        TotpRequiredResult,
    )
    from .redirects import AsyncRedirectListener, Redirect, RedirectListener
    from .session import PortalSession
    from .totp import (
        normalize_totp_code,
        totp_qr_code_matrix,
        totp_qr_code_png,
        totp_qr_code_svg,
        totp_qr_code_terminal,
        totp_secret,
    )
else:

    def __getattr__(name: str) -> object:
        module = _MODULES.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import sys  # importlib's import_module would cost more than some of the modules

        __import__(f"{__name__}.{module}")
        value = getattr(sys.modules[f"{__name__}.{module}"], name)
        globals()[name] = value  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_MODULES))
