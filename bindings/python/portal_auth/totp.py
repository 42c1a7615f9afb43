"""TOTP enrollment (docs/protocol.md §8): the secret of an otpauth link, for manual entry, and
its QR code as PNG bytes, SVG text, terminal text or a matrix of modules. Made by the library (libqrencode and
libpng): byte mode, error correction M, a 4-module quiet zone, black on opaque white."""

from __future__ import annotations

import ctypes

from . import _native
from ._error_handles import raise_from_out
from .errors import InvalidArgument, TotpQrUnavailable


def _link(otpauth_url: object) -> bytes:
    return _native.c_text(otpauth_url, "otpauth_url")


def _scale(scale: object) -> int:
    # Whole pixels a module, as the C ABI's int32. The library decides the range (and raises
    # TotpQrUnavailable with it): an int beyond int32 is passed as the bound it passed, which
    # is out of range too. Only what is no int at all is refused here, with the same error.
    if isinstance(scale, bool) or not isinstance(scale, int):
        raise TotpQrUnavailable("A QR code cannot be made at this scale: scale must be an int, whole pixels a module.")
    return max(-0x80000000, min(scale, 0x7FFFFFFF))


def normalize_totp_code(typed: str) -> str | None:
    """What the user typed for a TOTP code, for verify_totp: the six digits once the spaces
    and dashes authenticator apps show ("123 456", "123-456") are removed, or None when
    anything else is left or not exactly six digits remain (ask again; nothing was sent).
    verify_totp itself posts exactly what it is given."""
    if not isinstance(typed, str):
        raise InvalidArgument("typed")
    try:
        text = typed.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not a code
        return None
    if b"\0" in text:
        return None
    out = ctypes.create_string_buffer(_native.TOTP_CODE_SIZE)
    if _native.lib().portal_auth_totp_code_normalize(text, out) != _native.TRUE:
        return None
    return out.value.decode("ascii")


def totp_secret(otpauth_url: str) -> str | None:
    """The base32 secret of an enrollment link, or None when it carries no valid one. A
    secret: show it to the user, never log it."""
    out = ctypes.c_void_p()
    error = ctypes.c_void_p()
    raise_from_out(_native.lib().portal_auth_totp_secret(_link(otpauth_url), ctypes.byref(out), ctypes.byref(error)), error)
    return _native.take_string(out) if out.value else None


def totp_qr_code_png(otpauth_url: str, scale: int = 10) -> bytes:
    """The link's QR code as PNG bytes, `(modules + 8) × scale` pixels square. Raises
    TotpQrUnavailable for an unusable link, and for a scale that is not an int, is under 1 or
    makes a side over 8192 pixels (its message gives the range)."""
    lib = _native.lib()
    out = ctypes.c_void_p()
    length = ctypes.c_size_t()
    error = ctypes.c_void_p()
    code = lib.portal_auth_totp_qr_png(
        _link(otpauth_url), _scale(scale), ctypes.byref(out), ctypes.byref(length), ctypes.byref(error)
    )
    raise_from_out(code, error)
    try:
        return ctypes.string_at(out.value, length.value) if out.value else b""
    finally:
        lib.portal_auth_bytes_free(out)


def totp_qr_code_matrix(otpauth_url: str) -> list[list[bool]]:
    """The modules of the link's QR code (the code totp_qr_code_png draws), for a toolkit that
    paints it itself, crisp at any scale: rows from the top, each module True where dark, the
    4-module quiet zone included (the side is the code's modules plus 8). Raises
    TotpQrUnavailable for an unusable link."""
    lib = _native.lib()
    side = ctypes.c_int32()
    out = ctypes.c_void_p()
    length = ctypes.c_size_t()
    error = ctypes.c_void_p()
    code = lib.portal_auth_totp_qr_matrix(
        _link(otpauth_url), ctypes.byref(side), ctypes.byref(out), ctypes.byref(length), ctypes.byref(error)
    )
    raise_from_out(code, error)
    try:
        packed = ctypes.string_at(out.value, length.value) if out.value else b""
    finally:
        lib.portal_auth_bytes_free(out)
    stride = (side.value + 7) // 8  # the C ABI's row: the leftmost module the first byte's top bit
    return [
        [bool(packed[row * stride + column // 8] & (0x80 >> column % 8)) for column in range(side.value)]
        for row in range(side.value)
    ]


def totp_qr_code_svg(otpauth_url: str, scale: int = 10) -> str:
    """The link's QR code as SVG text (one unit a module, `scale` pixels a module nominally),
    for web views and toolkits that scale it. Raises as totp_qr_code_png."""
    out = ctypes.c_void_p()
    error = ctypes.c_void_p()
    code = _native.lib().portal_auth_totp_qr_svg(_link(otpauth_url), _scale(scale), ctypes.byref(out), ctypes.byref(error))
    raise_from_out(code, error)
    return _native.take_string(out)


def totp_qr_code_terminal(otpauth_url: str, dark_on_light: bool = False) -> str:
    """The link's QR code as lines of Unicode half blocks, quiet zone included, each line
    ending in a newline, for a terminal a phone camera can read; `dark_on_light` for
    terminals with a light background. Raises TotpQrUnavailable for an unusable link."""
    colors = _native.TERMINAL_DARK_ON_LIGHT if dark_on_light else _native.TERMINAL_LIGHT_ON_DARK
    out = ctypes.c_void_p()
    error = ctypes.c_void_p()
    code = _native.lib().portal_auth_totp_qr_terminal(_link(otpauth_url), colors, ctypes.byref(out), ctypes.byref(error))
    raise_from_out(code, error)
    return _native.take_string(out)
