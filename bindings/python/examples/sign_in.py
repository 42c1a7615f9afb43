"""Signs a user in by magic link, with TOTP two-factor (enrolling an authenticator app on the
first sign-in), and keeps the session in the desktop keyring.

    python examples/sign_in.py --environment YOUR_ENVIRONMENT_ID

Offline, against the emulator (`portal-auth-emulator --port 8787`): add
`--api-host http://127.0.0.1:8787 --environment env-demo`. The emulator sends no email; the
link is in its outbox, http://127.0.0.1:8787/_emulator/outbox.
"""

from __future__ import annotations

import argparse
import sys

from portal_auth import AuthenticatedResult, MagicLinkConfig, PortalAuth, PortalAuthError, TotpRequiredResult


def sign_in(auth: PortalAuth) -> AuthenticatedResult:
    auth.send_magic_link(input("Email: "))
    print("We sent you a sign-in link. Open it, or paste it here.")
    result = auth.handle_redirect(input("Link: "))
    while result is None:
        result = auth.handle_redirect(input("That is not a sign-in link of this app. Link: "))
    if isinstance(result, TotpRequiredResult):
        if result.totp_link is not None:
            print("First sign-in: scan this code with your authenticator app,")
            print(result.qr_code_terminal(), end="")
            print(f"or enter this key in it by hand: {result.totp_secret}")
        result = auth.verify_totp(input("Code from your authenticator app: "), result.user_jwt)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--environment", required=True, help="your Portal auth environment id")
    parser.add_argument("--api-host", default="api.portalhq.io")
    parser.add_argument("--redirect-url", default="myapp://auth/callback")
    parser.add_argument("--from-email", default="hello@auth.example.com")
    parser.add_argument("--template-id", default="sign-in")
    args = parser.parse_args()
    try:
        with PortalAuth(
            auth_environment_id=args.environment,
            redirect_url=args.redirect_url,
            api_host=args.api_host,
            magic_link=MagicLinkConfig(from_email=args.from_email, template_id=args.template_id),
        ) as auth:
            session = auth.restore_session()
            if session is None:
                session = sign_in(auth).session
            print(f"Signed in as {session.end_user_id}.")
            return 0
    except PortalAuthError as error:
        print(f"Sign-in failed: {error}", file=sys.stderr)
        return 1
    except (EOFError, KeyboardInterrupt):
        print("\nSign-in abandoned.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
