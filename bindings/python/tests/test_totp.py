"""TOTP enrollment from Python: the secret and the QR code (PNG, SVG, terminal text, modules), read
back by a real QR decoder (zbarimg) to the link, and refused for unusable links and scales."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import Emulator, decode, grey_png, png_size, rasterise

import portal_auth
from portal_auth import TotpQrUnavailable, TotpRequiredResult


@pytest.fixture
def enrollment(make_client, emu: Emulator, env: str) -> TotpRequiredResult:
    auth = make_client(env)
    auth.send_magic_link("qr@example.com")
    step = auth.handle_redirect(emu.outbox_link("qr@example.com"))
    assert isinstance(step, TotpRequiredResult) and step.totp_link is not None
    return step


def test_secret_and_png_read_back_to_the_link(enrollment: TotpRequiredResult, tmp_path: Path) -> None:
    link = enrollment.totp_link
    assert link is not None
    secret = enrollment.totp_secret
    assert secret and secret == parse_qs(urlsplit(link).query)["secret"][0].upper()
    assert secret == portal_auth.totp_secret(link)

    png = enrollment.qr_code_png()
    assert png == portal_auth.totp_qr_code_png(link, scale=10)  # the same bytes every time
    width, height = png_size(png)
    assert width == height and width % 10 == 0 and (width // 10 - 8 - 21) % 4 == 0
    (tmp_path / "code.png").write_bytes(png)
    assert decode(tmp_path / "code.png") == link

    small = enrollment.qr_code_png(scale=3)
    assert png_size(small)[0] == width // 10 * 3


def test_svg_and_terminal_forms(enrollment: TotpRequiredResult, tmp_path: Path) -> None:
    link = enrollment.totp_link
    assert link is not None
    svg = enrollment.qr_code_svg()
    assert svg.startswith("<svg") or svg.startswith("<?xml") and "<svg" in svg
    assert svg == portal_auth.totp_qr_code_svg(link)
    for dark_on_light in (False, True):
        text = enrollment.qr_code_terminal(dark_on_light=dark_on_light)
        assert text == portal_auth.totp_qr_code_terminal(link, dark_on_light=dark_on_light)
        assert set(text) <= set(" ▀▄█\n") and len({len(line) for line in text.splitlines()}) == 1
        screen = tmp_path / f"terminal-{dark_on_light}.png"
        screen.write_bytes(grey_png(rasterise(text, dark_on_light)))
        assert decode(screen) == link


def test_the_matrix_paints_the_code_the_png_draws(enrollment: TotpRequiredResult, tmp_path: Path) -> None:
    link = enrollment.totp_link
    assert link is not None
    modules = portal_auth.totp_qr_code_matrix(link)
    side = len(modules)
    assert side == png_size(portal_auth.totp_qr_code_png(link, scale=1))[0] and all(len(row) == side for row in modules)
    assert not any(modules[0]) and not any(row[-1] for row in modules)  # the quiet zone is white
    painted = [[0 if dark else 255 for dark in row for _ in range(4)] for row in modules for _ in range(4)]
    (tmp_path / "painted.png").write_bytes(grey_png(painted))
    assert decode(tmp_path / "painted.png") == link
    with pytest.raises(TotpQrUnavailable):
        portal_auth.totp_qr_code_matrix("https://example.com/?secret=JBSWY3DPEHPK3PXP")


# The seed SDK's qrCodeImage(scale:) throws totpQrUnavailable for a scale it cannot draw.
@pytest.mark.parametrize("scale", [0, -1, -(2**31), 10**6, 2**31 - 1, 2**31, -(2**31) - 1, 10**400])
def test_unusable_scales_are_unavailable_and_name_the_range(enrollment: TotpRequiredResult, scale: int) -> None:
    with pytest.raises(TotpQrUnavailable) as raised:
        enrollment.qr_code_png(scale=scale)
    with pytest.raises(TotpQrUnavailable):
        enrollment.qr_code_svg(scale=scale)
    side = len(portal_auth.totp_qr_code_matrix(enrollment.totp_link or ""))
    assert f"scale must be a whole number of pixels a module from 1 to {8192 // side} for this code" in str(raised.value)


# The C ABI takes whole pixels in an int32: what is no int never reaches it, and is refused
# as any other scale the code cannot be drawn at.
@pytest.mark.parametrize("scale", ["10", True, None, 2.5, 10.0, float("inf")])
def test_scales_of_the_wrong_type(enrollment: TotpRequiredResult, scale: object) -> None:
    with pytest.raises(TotpQrUnavailable) as raised:
        enrollment.qr_code_png(scale=scale)  # type: ignore[arg-type]
    assert "scale must be an int" in str(raised.value)


@pytest.mark.parametrize(
    "link",
    [
        "https://example.com/?secret=JBSWY3DPEHPK3PXP",
        "otpauth://totp/Portal:x?issuer=Portal",
        "otpauth://totp/Portal:x?secret=not*base32",
        "otpauth://totp/Portal:x?secret=JBSWY3DPEHPK3PXP&pad=" + "a" * 200_000,
        "",
    ],
)
def test_unusable_links(link: str) -> None:
    with pytest.raises(TotpQrUnavailable) as raised:
        portal_auth.totp_qr_code_png(link)
    assert "JBSWY3DPEHPK3PXP" not in str(raised.value)
    with pytest.raises(TotpQrUnavailable):
        portal_auth.totp_qr_code_terminal(link)


def test_secret_of_links_without_one() -> None:
    assert portal_auth.totp_secret("https://example.com/") is None
    assert portal_auth.totp_secret("otpauth://totp/x?secret=") is None
    with pytest.raises(portal_auth.InvalidArgument):
        portal_auth.totp_secret("otpauth://totp/x?secret=\udc80")


def test_a_step_without_enrollment_has_no_qr_code() -> None:
    step = TotpRequiredResult(user_jwt="jwt", totp_link=None, end_user_id="eu_1")
    assert step.totp_secret is None
    with pytest.raises(TotpQrUnavailable):
        step.qr_code_png()


def test_a_host_may_rebuild_the_step_from_a_kept_link(enrollment: TotpRequiredResult) -> None:
    kept = TotpRequiredResult(user_jwt="jwt", totp_link=enrollment.totp_link, end_user_id="eu_1")
    assert kept.qr_code_png() == enrollment.qr_code_png()
