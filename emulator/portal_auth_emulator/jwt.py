"""HS256 JSON Web Tokens and unpadded base64url, as the backend issues `userJwt`.

Error reasons are fixed text so that nothing derived from a token reaches a log
or a response.
"""

import base64
import hashlib
import hmac
import json

from .messages import JsonObject

_HEADER = {"alg": "HS256", "typ": "JWT"}
_B64URL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


class JwtError(Exception):
    """The token cannot be accepted; `reason` is fixed text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def b64url_encode(data: bytes) -> str:
    """`data` in base64url, without padding, as JWTs are written."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Strict decode: the URL-safe alphabet only and no padding, as JWTs are written."""
    if not all(char in _B64URL_CHARS for char in text) or len(text) % 4 == 1:
        raise JwtError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _compact_json(value: JsonObject) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=False).encode("utf-8")


def _signature(signing_input: bytes, secret: str) -> bytes:
    return hmac.new(secret.encode("utf-8"), signing_input, hashlib.sha256).digest()


def sign(claims: JsonObject, secret: str) -> str:
    """An HS256 JWT of `claims`, signed with `secret`."""
    head = b64url_encode(_compact_json(_HEADER))
    body = b64url_encode(_compact_json(claims))
    signing_input = f"{head}.{body}".encode("ascii")
    return f"{head}.{body}.{b64url_encode(_signature(signing_input, secret))}"


def verify(token: str, secret: str, now: float) -> JsonObject:
    """Return the claims of a well-signed, unexpired token, else raise JwtError."""
    parts = token.split(".")
    if len(parts) != 3:
        raise JwtError("malformed token")
    head, body, signature = parts
    expected = _signature(f"{head}.{body}".encode("ascii", "replace"), secret)
    # Signature first, so a forged header or claims set is never interpreted.
    if not hmac.compare_digest(b64url_decode(signature), expected):
        raise JwtError("bad signature")
    header = _decode_object(head)
    if header.get("alg") != "HS256":
        raise JwtError("unsupported algorithm")
    claims = _decode_object(body)
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise JwtError("no expiry")
    if now >= exp:
        raise JwtError("expired token")
    return claims


def _decode_object(segment: str) -> JsonObject:
    try:
        value = json.loads(b64url_decode(segment).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise JwtError("unreadable segment") from None
    if not isinstance(value, dict):
        raise JwtError("segment is not an object")
    return value
