"""What the calls return: frozen dataclasses and the AuthMethod enum."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .session import PortalSession


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

    def __repr__(self) -> str:
        link = "None" if self.totp_link is None else "'<redacted>'"
        return f"TotpRequiredResult(user_jwt='<redacted>', totp_link={link}, end_user_id={self.end_user_id!r})"
