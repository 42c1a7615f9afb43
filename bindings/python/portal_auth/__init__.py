"""Portal's Client Auth for Python on Linux desktops: sign users in by magic link, Google or
Apple, with TOTP two-factor, and keep their session in the desktop keyring.

    from portal_auth import PortalAuth, MagicLinkConfig

    with PortalAuth(auth_environment_id="...", redirect_url="myapp://auth/callback",
                    magic_link=MagicLinkConfig(from_email="...", template_id="...")) as auth:
        auth.send_magic_link("user@example.com")

A thin layer over libportalauth.so.0 (ctypes, standard library only). `AsyncPortalAuth` has
the same calls as coroutines. The library's log lines go to the `portal_auth` logger. For
offline development, `python -m portal_auth.emulator` serves Portal's API locally.
"""

from ._storage import SessionStore
from .client import AsyncPortalAuth, PortalAuth
from .redirects import AsyncRedirectListener, Redirect, RedirectListener
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
    SignInUnavailableReason,
    StorageFailureReason,
    TotpQrUnavailable,
    Unauthorized,
)
from .results import (
    AuthenticatedResult,
    AuthMethod,
    AuthMethodsResult,
    AuthorizeUrlResult,
    MagicLinkConfig,
    RedirectForwarding,
    TotpRequiredResult,
)
from .session import PortalSession
from .totp import totp_qr_code_png, totp_qr_code_svg, totp_qr_code_terminal, totp_secret

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
    "SignInError",
    "SignInInProgress",
    "SignInUnavailable",
    "SignInUnavailableReason",
    "StorageFailureReason",
    "TotpQrUnavailable",
    "TotpRequiredResult",
    "totp_qr_code_png",
    "totp_qr_code_svg",
    "totp_qr_code_terminal",
    "totp_secret",
    "Unauthorized",
]
