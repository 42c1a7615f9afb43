"""AuthMethod, the sign-in methods an environment can enable: a leaf of the package (it
imports nothing of it), so that both the results and the errors read from the library use
the one enum."""

from __future__ import annotations

import enum


class AuthMethod(str, enum.Enum):
    """A sign-in method an environment can enable; its value is Portal's name for it."""

    EMAIL_MAGIC_LINK = "EMAIL_MAGIC_LINK"
    """A sign-in link sent by email (send_magic_link)."""
    GOOGLE = "GOOGLE"
    """Google sign-in (login_with_google, sign_in_with_google)."""
    APPLE = "APPLE"
    """Apple sign-in (login_with_apple, sign_in_with_apple)."""
