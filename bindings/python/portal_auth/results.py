"""What the calls return: frozen dataclasses and the AuthMethod enum."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import totp
from .errors import TotpQrUnavailable

if TYPE_CHECKING:
    from .session import PortalSession


class RedirectForwarding(enum.IntEnum):
    """What became of a redirect forward_redirect handed on. The values are the C ABI's
    PORTAL_AUTH_FORWARD_* numbers."""

    TAKEN = 1
    """The running instance took it and completes the sign-in: nothing more to do here."""
    NO_INSTANCE = 2
    """No instance listens: handle the URL here (handle_redirect)."""
    REFUSED = 3
    """Not a redirect of this client (checked here, or by the running instance): nothing was
    handed over, and handle_redirect would return None for it."""


class AuthMethod(str, enum.Enum):
    """A sign-in method an environment can enable."""

    EMAIL_MAGIC_LINK = "EMAIL_MAGIC_LINK"
    GOOGLE = "GOOGLE"
    APPLE = "APPLE"


@dataclass(frozen=True)
class MagicLinkConfig:
    """The sender and template that send_magic_link uses."""

    from_email: str
    template_id: str


@dataclass(frozen=True)
class AuthMethodsResult:
    allowed_auth_methods: list[AuthMethod]
    auto_create_wallet: bool


@dataclass(frozen=True)
class AuthorizeUrlResult:
    authorize_url: str


@dataclass(frozen=True)
class AuthenticatedResult:
    """A signed-in user; the session is already persisted when this is returned."""

    session: PortalSession
    client_id: str | None
    is_account_abstracted: bool | None


@dataclass(frozen=True, repr=False)
class TotpRequiredResult:
    """The two-factor step: pass `user_jwt` to verify_totp with the user's code.
    `totp_link` (the enrollment link, on a first sign-in only) embeds the TOTP secret; the
    repr hides both."""

    user_jwt: str
    totp_link: str | None
    end_user_id: str

    @property
    def totp_secret(self) -> str | None:
        """The secret of `totp_link`, for manual entry in an authenticator app; None without
        an enrollment link. A secret: show it to the user, never log it."""
        return None if self.totp_link is None else totp.totp_secret(self.totp_link)

    def qr_code_png(self, scale: int = 10) -> bytes:
        """The enrollment QR code as PNG bytes (see totp_qr_code_png)."""
        return totp.totp_qr_code_png(self._enrollment_link(), scale)

    def qr_code_svg(self, scale: int = 10) -> str:
        """The enrollment QR code as SVG text (see totp_qr_code_svg)."""
        return totp.totp_qr_code_svg(self._enrollment_link(), scale)

    def qr_code_terminal(self, dark_on_light: bool = False) -> str:
        """The enrollment QR code as terminal text (see totp_qr_code_terminal)."""
        return totp.totp_qr_code_terminal(self._enrollment_link(), dark_on_light)

    def _enrollment_link(self) -> str:
        if self.totp_link is None:
            raise TotpQrUnavailable("No QR code: this step has no enrollment link (the user is enrolled already).")
        return self.totp_link

    def __repr__(self) -> str:
        link = "None" if self.totp_link is None else "'<redacted>'"
        return f"TotpRequiredResult(user_jwt='<redacted>', totp_link={link}, end_user_id={self.end_user_id!r})"
