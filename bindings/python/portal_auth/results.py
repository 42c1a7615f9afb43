"""What the calls return: immutable value types with exactly the fields of the Python
binding's contract (docs/desktop.md "Python binding"). Their AuthMethod enum is in
_auth_method, loaded by the first get_methods."""

from __future__ import annotations

from . import totp
from ._values import Value
from ._values import set_field as _set_field
from .errors import TotpQrUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._auth_method import AuthMethod
    from .session import PortalSession

__all__ = ["AuthMethodsResult", "AuthenticatedResult", "AuthorizeUrlResult", "MagicLinkConfig", "TotpRequiredResult"]


class MagicLinkConfig(Value):
    """The sender and template that send_magic_link uses."""

    __slots__ = ("from_email", "template_id")
    __match_args__ = ("from_email", "template_id")
    from_email: str
    """The address the email comes from."""
    template_id: str
    """The email template, in Portal's dashboard."""

    def __init__(self, from_email: str, template_id: str) -> None:
        """The magic-link email's sender and template."""
        _set_field(self, "from_email", from_email)
        _set_field(self, "template_id", template_id)


class AuthMethodsResult(Value):
    """What get_methods found: the methods the environment has enabled."""

    __slots__ = ("allowed_auth_methods", "auto_create_wallet")
    __match_args__ = ("allowed_auth_methods", "auto_create_wallet")
    allowed_auth_methods: list[AuthMethod]
    """The enabled methods, in Portal's order."""
    auto_create_wallet: bool
    """Whether Portal suggests creating a wallet for a new user."""

    def __init__(self, allowed_auth_methods: list[AuthMethod], auto_create_wallet: bool) -> None:
        """The methods an environment allows."""
        _set_field(self, "allowed_auth_methods", allowed_auth_methods)
        _set_field(self, "auto_create_wallet", auto_create_wallet)


class AuthorizeUrlResult(Value):
    """A fresh authorize URL (login_with_google, login_with_apple), single-use."""

    __slots__ = ("authorize_url",)
    __match_args__ = ("authorize_url",)
    authorize_url: str
    """The URL to open in the user's browser."""

    def __init__(self, authorize_url: str) -> None:
        """An authorize URL."""
        _set_field(self, "authorize_url", authorize_url)


class AuthenticatedResult(Value):
    """A signed-in user; the session is already persisted when this is returned."""

    __slots__ = ("session", "client_id", "is_account_abstracted")
    __match_args__ = ("session", "client_id", "is_account_abstracted")
    session: PortalSession
    """The user's session."""
    client_id: str | None
    """The Portal client id, when the server sent one."""
    is_account_abstracted: bool | None
    """Whether the account is account-abstracted; None when the server did not say."""

    def __init__(self, session: PortalSession, client_id: str | None, is_account_abstracted: bool | None) -> None:
        """A signed-in result."""
        _set_field(self, "session", session)
        _set_field(self, "client_id", client_id)
        _set_field(self, "is_account_abstracted", is_account_abstracted)


class TotpRequiredResult(Value):
    """The two-factor step: pass `user_jwt` to verify_totp with the user's code.
    `totp_link` (the enrollment link, on a first sign-in only) embeds the TOTP secret; the
    repr hides both. A host may build one from a link it kept, by keyword."""

    __slots__ = ("user_jwt", "totp_link", "end_user_id", "expires_at")
    __match_args__ = ("user_jwt", "totp_link", "end_user_id", "expires_at")
    user_jwt: str
    """The step's userJwt, for verify_totp. A secret: never log it."""
    totp_link: str | None
    """The `otpauth://` enrollment link, on the user's first sign-in only. A secret."""
    end_user_id: str
    """The user's id; "" when the server did not send it."""
    expires_at: int | None
    """When the step expires, in whole seconds since the epoch (compare with time.time()):
    the userJwt's expiry, ten minutes after the sign-in; None when it carries none. A code
    verified later fails with Unauthorized, reason TOTP_STEP_EXPIRED: sign in again."""

    def __init__(self, user_jwt: str, totp_link: str | None, end_user_id: str, expires_at: int | None = None) -> None:
        """A TOTP step."""
        _set_field(self, "user_jwt", user_jwt)
        _set_field(self, "totp_link", totp_link)
        _set_field(self, "end_user_id", end_user_id)
        _set_field(self, "expires_at", expires_at)

    @property
    def totp_secret(self) -> str | None:
        """The secret of `totp_link`, for manual entry in an authenticator app; None without
        an enrollment link. A secret: show it to the user, never log it."""
        return None if self.totp_link is None else totp.totp_secret(self.totp_link)

    def qr_code_png(self, scale: int = 10) -> bytes:
        """The enrollment QR code as PNG bytes, `scale` pixels a module (see
        totp_qr_code_png). Raises TotpQrUnavailable without an enrollment link."""
        return totp.totp_qr_code_png(self._enrollment_link(), scale)

    def qr_code_svg(self, scale: int = 10) -> str:
        """The enrollment QR code as SVG text (see totp_qr_code_svg). Raises
        TotpQrUnavailable without an enrollment link."""
        return totp.totp_qr_code_svg(self._enrollment_link(), scale)

    def qr_code_terminal(self, dark_on_light: bool = False) -> str:
        """The enrollment QR code as terminal text (see totp_qr_code_terminal). Raises
        TotpQrUnavailable without an enrollment link."""
        return totp.totp_qr_code_terminal(self._enrollment_link(), dark_on_light)

    def _enrollment_link(self) -> str:
        if self.totp_link is None:
            raise TotpQrUnavailable("No QR code: this step has no enrollment link (the user is enrolled already).")
        return self.totp_link

    def __repr__(self) -> str:
        """The fields, with `user_jwt` and `totp_link` redacted."""
        link = "None" if self.totp_link is None else "'<redacted>'"
        return (f"TotpRequiredResult(user_jwt='<redacted>', totp_link={link}, end_user_id={self.end_user_id!r}, "
                f"expires_at={self.expires_at!r})")
