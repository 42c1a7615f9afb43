#!/usr/bin/python3
"""A PyGObject program on portal-auth-glib's introspection data: signs a new user in by magic
link against the Portal emulator in PORTAL_AUTH_TEST_API_HOST, as an app would. It sends the
link, opens it from the emulator's outbox, handles the redirect, enrolls TOTP (the QR code's
PNG read back by zbarimg and its modules checked, the code computed from the secret shown for
manual entry), verifies the code, restores the session from a second client, and signs out.
Run by scripts/test-glib.sh with Debian's python3-gi; closes with "pygobject: N passed, 0 failed".
"""

import base64
import hashlib
import hmac
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

import gi

gi.require_version("PortalAuth", "0")
from gi.repository import GLib, PortalAuth  # noqa: E402

API_HOST = os.environ["PORTAL_AUTH_TEST_API_HOST"]
REDIRECT = "myapp://auth/callback"
passed = failed = 0


def check(condition: bool, what: str) -> None:
    global passed, failed
    if condition:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAILED: {what}", file=sys.stderr)


def control(method: str, path: str, body: object = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(API_HOST + "/_emulator/" + path, data=data, method=method)
    request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        raw = response.read()
    return json.loads(raw) if raw else {}


def run(start, finish, *arguments):
    """Starts an _async call, runs a main loop until its callback, and returns _finish's value."""
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        try:
            outcome["value"] = finish(result)
        except GLib.Error as error:
            outcome["error"] = error
        loop.quit()

    def timed_out():
        outcome["error"] = TimeoutError(f"{start.__name__} did not call back in 60 s")
        loop.quit()
        return GLib.SOURCE_REMOVE

    start(*arguments, None, done)
    timer = GLib.timeout_add_seconds(60, timed_out)
    loop.run()
    if not isinstance(outcome.get("error"), TimeoutError):
        GLib.source_remove(timer)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def totp_code(secret: str, now: float) -> str:
    """RFC 6238 (SHA-1, 30 s, 6 digits), as the user's authenticator app computes it."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(now // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000:06d}"


def client(environment: str) -> PortalAuth.Client:
    made = PortalAuth.Client(
        auth_environment_id=environment, redirect_url=REDIRECT, api_host=API_HOST,
        magic_link_from_email="hello@auth.example.com", magic_link_template_id="tmpl",
        storage=PortalAuth.StorageKind.KEYRING,
    )
    made.init(None)
    return made


def main() -> int:
    environment = f"env-gi-{uuid.uuid4().hex[:10]}"
    control("POST", "environments", {
        "id": environment, "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE"], "redirectUrls": [REDIRECT],
        "totpRequired": True, "accountAbstraction": False, "autoCreateWallet": False,
    })
    try:
        PortalAuth.Client.new(" ", REDIRECT)
        check(False, "a blank environment id is refused")
    except GLib.Error as error:
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.INVALID_ARGUMENT),
              "a blank environment id is PortalAuth.Error.INVALID_ARGUMENT")

    auth = client(environment)
    changes = []
    auth.connect("session-changed", lambda _client, session: changes.append(session))
    methods = run(auth.get_methods_async, auth.get_methods_finish)
    check(list(methods.props.allowed_auth_methods) == ["EMAIL_MAGIC_LINK", "GOOGLE"]
          and not methods.props.auto_create_wallet, "the environment's methods")

    email = "gi-ada@example.com"
    check(run(auth.send_magic_link_async, auth.send_magic_link_finish, email), "the magic link is sent")
    messages = control("GET", "outbox?email=" + urllib.parse.quote(email))["messages"]
    link = messages[-1]["link"]
    check(link.startswith(REDIRECT + "?"), "the email's link leads to the redirect URL")

    step = run(auth.handle_redirect_async, auth.handle_redirect_finish, link)
    check(step.get_kind() == PortalAuth.ResultKind.TOTP_REQUIRED and step.props.session is None and not changes,
          "a new user's redirect asks for TOTP enrollment")
    totp_link = step.props.totp_link
    secret = step.get_totp_secret()
    check(totp_link.startswith("otpauth://totp/") and secret in totp_link, "the step's enrollment link and secret")

    qr = step.get_qr_code()
    side, modules = qr.props.side, qr.props.modules.get_data()
    row_bytes = (side + 7) // 8
    check(len(modules) == side * row_bytes and all(
        (modules[row * row_bytes + column // 8] >> (7 - column % 8) & 1) == qr.is_dark(row, column)
        for row in range(side) for column in range(side)), "the QR code's modules, a bit each")
    with tempfile.NamedTemporaryFile(suffix=".png") as image:
        image.write(qr.to_png(8).get_data())
        image.flush()
        decoded = subprocess.run(["zbarimg", "--raw", "-q", "-Sbinary", image.name],
                                 capture_output=True, text=True, check=False).stdout
    check(decoded == totp_link, "zbarimg reads the enrollment link from the QR code's PNG")

    check(time.time() + 590 <= step.props.totp_expires_at <= time.time() + 601, "the step expires in ten minutes")
    right = totp_code(secret, time.time())
    try:
        run(auth.verify_totp_async, auth.verify_totp_finish, "%06d" % ((int(right) + 500000) % 1000000), step.props.user_jwt)
        check(False, "a wrong code fails")
    except GLib.Error as error:
        # (PyGObject's GLib.Error keeps the domain, code and message, not the extended fields.)
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.UNAUTHORIZED), "a wrong code is UNAUTHORIZED")
    reason = PortalAuth.ErrorReason.TOTP_CODE_REJECTED
    check(reason.value_nick == "totp-code-rejected" and PortalAuth.ErrorReason.get_user_message(reason).endswith("."),
          "a reason's name and its sentence for the user")
    typed = PortalAuth.normalize_totp_code(right[:3] + " " + right[3:])
    check(typed == right and PortalAuth.normalize_totp_code("12345") is None, "the typed code, tidied")
    result = run(auth.verify_totp_async, auth.verify_totp_finish, typed, step.props.user_jwt)
    session = result.get_session()
    check(result.get_kind() == PortalAuth.ResultKind.AUTHENTICATED and session.props.end_user_id.startswith("eu_"),
          "the code from the secret signs the user in")
    check(changes == [session] and auth.props.session == session, "session-changed and the session property")
    check(len(session.get_token()) > 16, "the session has its token")

    later = client(environment)
    restored = run(later.restore_session_async, later.restore_session_finish)
    check(restored is not None and restored.props.end_user_id == session.props.end_user_id,
          "a second client restores the session from the keyring")

    check(run(auth.clear_persisted_session_async, auth.clear_persisted_session_finish), "signing out")
    check(changes == [session, None] and auth.props.session is None, "session-changed on signing out")
    check(run(later.restore_session_async, later.restore_session_finish) is None, "nothing to restore afterwards")
    try:
        run(auth.verify_totp_async, auth.verify_totp_finish, "000000", "not.a.jwt")
        check(False, "a malformed userJwt fails")
    except GLib.Error as error:
        check(error.matches(PortalAuth.error_quark(), PortalAuth.Error.INVALID_USER_JWT), "PortalAuth.Error.INVALID_USER_JWT")
    print(f"pygobject: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
