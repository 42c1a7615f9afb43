"""RFC 4226 HOTP / RFC 6238 TOTP (HMAC-SHA1, 30-second steps) and otpauth links."""

import base64
import hashlib
import hmac
import secrets
import struct
from urllib.parse import quote

STEP_SECONDS = 30
DIGITS = 6
SECRET_BYTES = 20


def new_secret() -> bytes:
    """A new random TOTP key."""
    return secrets.token_bytes(SECRET_BYTES)


def base32_secret(key: bytes) -> str:
    """`key` in base32 without padding, as an authenticator app takes it."""
    # Authenticator apps expect the base32 text without '=' padding.
    return base64.b32encode(key).decode("ascii").rstrip("=")


def hotp(key: bytes, counter: int, digits: int = DIGITS) -> str:
    """The RFC 4226 code of `key` at `counter`."""
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10**digits).zfill(digits)


def totp(key: bytes, unix_time: float, digits: int = DIGITS) -> str:
    """The RFC 6238 code of `key` at `unix_time` (30-second steps)."""
    return hotp(key, int(unix_time // STEP_SECONDS), digits)


def verify(key: bytes, code: object, unix_time: float, window: int = 1) -> bool:
    """True if `code` matches the current step or one within `window` steps of it."""
    if not isinstance(code, str):
        return False
    given = code.encode("utf-8")
    counter = int(unix_time // STEP_SECONDS)
    matched = False
    for step in range(counter - window, counter + window + 1):
        if step >= 0:
            # No early exit: keep the comparison time independent of which step matched.
            matched |= hmac.compare_digest(hotp(key, step).encode("ascii"), given)
    return matched


def otpauth_link(email: str, key: bytes) -> str:
    """The otpauth:// enrollment link of `key` for `email`."""
    label = quote(email, safe="@")
    return (
        f"otpauth://totp/Portal:{label}?secret={base32_secret(key)}"
        "&issuer=Portal&algorithm=SHA1&digits=6&period=30"
    )
