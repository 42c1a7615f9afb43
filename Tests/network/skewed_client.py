"""A client on a machine whose clock is off (run under faketime by the network tests): it
signs in by magic link to a TOTP step of the emulator at argv[1], types a wrong code, and
prints what it saw as JSON: the seconds its step says are left, and the refusal's reason."""

import json
import sys
import time
import urllib.parse
import urllib.request
import uuid

import portal_auth

EMULATOR = sys.argv[1]
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def control(path: str) -> dict:
    with DIRECT.open(f"{EMULATOR}/_emulator/{path}", timeout=30) as answer:
        return json.loads(answer.read())


def main() -> None:
    email = f"skewed-{uuid.uuid4().hex[:8]}@example.com"
    auth = portal_auth.PortalAuth(
        auth_environment_id="env-demo", redirect_url="myapp://auth/callback", api_host=EMULATOR, storage="memory",
        magic_link=portal_auth.MagicLinkConfig(from_email="hello@auth.example.com", template_id="tmpl-1"))
    auth.send_magic_link(email)
    link = control("outbox?" + urllib.parse.urlencode({"email": email, "count": 1}))["messages"][-1]["link"]
    step = auth.handle_redirect(link)
    assert isinstance(step, portal_auth.TotpRequiredResult) and step.expires_at is not None
    left = step.expires_at - time.time()
    code = control("totp?" + urllib.parse.urlencode({"environmentId": "env-demo", "email": email}))["code"]
    wrong = f"{(int(code) + 500_000) % 1_000_000:06d}"
    try:
        auth.verify_totp(wrong, step.user_jwt)
        reason = "accepted"
    except portal_auth.Unauthorized as refused:
        reason = refused.reason.name if refused.reason else "none"
    print(json.dumps({"left": left, "reason": reason}))


if __name__ == "__main__":
    main()
