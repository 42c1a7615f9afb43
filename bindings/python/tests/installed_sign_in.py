"""A sign-in through an installed portal_auth, as a new user's program makes one, for
scripts/test-wheel.sh: magic link, TOTP enrollment with the code of the emulator's
authenticator, the session persisted in the keyring and restored by a second client. Prints
where the library was loaded from and who signed in.

    python installed_sign_in.py API_HOST [ENVIRONMENT]

ENVIRONMENT names the emulator environment it makes (default: one of this process's own),
for a program of another language to restore the session from the keyring after it."""

from __future__ import annotations

import json
import logging
import os
import sys
import urllib.parse
import urllib.request

import portal_auth
from portal_auth import MagicLinkConfig, PortalAuth, TotpRequiredResult, _native

EMAIL = "wheel@example.com"
REDIRECT = "myapp://auth/callback"


def control(api_host: str, method: str, path: str, body: object = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{api_host}/_emulator/{path}", data=data, method=method)
    request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as answer:
        loaded: dict[str, object] = json.loads(answer.read())
        return loaded


def main() -> int:
    api_host = sys.argv[1]
    log_file = os.environ.get("PORTAL_AUTH_TEST_LOG_FILE")
    if log_file:  # the library's lines, for the run's log audit
        handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("python\t%(levelname)s\t%(message)s"))
        logging.getLogger("portal_auth").addHandler(handler)
        logging.getLogger("portal_auth").setLevel(logging.DEBUG)
    environment = sys.argv[2] if len(sys.argv) > 2 else f"env-wheel-{os.getpid()}"
    control(api_host, "POST", "environments", {
        "id": environment, "allowedMethods": ["EMAIL_MAGIC_LINK"], "redirectUrls": [REDIRECT],
        "totpRequired": True, "accountAbstraction": False, "autoCreateWallet": True,
    })
    config = MagicLinkConfig(from_email="hello@auth.example.com", template_id="sign-in")
    with PortalAuth(auth_environment_id=environment, redirect_url=REDIRECT, api_host=api_host, magic_link=config) as auth:
        auth.send_magic_link(EMAIL)
        messages = control(api_host, "GET", "outbox?email=" + urllib.parse.quote(EMAIL))["messages"]
        assert isinstance(messages, list)
        step = auth.handle_redirect(messages[-1]["link"])
        assert isinstance(step, TotpRequiredResult) and step.totp_secret, step
        query = urllib.parse.urlencode({"environmentId": environment, "email": EMAIL})
        code = control(api_host, "GET", "totp?" + query)["code"]
        assert isinstance(code, str)
        signed_in = auth.verify_totp(code, step.user_jwt)
    with PortalAuth(auth_environment_id=environment, redirect_url=REDIRECT, api_host=api_host) as again:
        restored = again.restore_session()
    assert restored is not None and restored.end_user_id == signed_in.session.end_user_id
    print(f"portal_auth {portal_auth.__version__} from {_native.library_path()}")
    print(f"signed in as {restored.end_user_id}, restored from the keyring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
