"""Signs a user in by magic link, with TOTP two-factor (enrolling an authenticator app on the
first sign-in), and keeps the session in the desktop keyring.

    python examples/sign_in.py --environment YOUR_ENVIRONMENT_ID \
        --redirect-url http://127.0.0.1:8765/callback

With a loopback redirect URL that the environment allows, the browser the user opens the
email in brings the link back and the program finishes by itself; with a custom scheme
(the default, myapp://auth/callback) the user pastes the link. Either way the link may be
pasted, for an email opened on another device or over SSH (sign_in_with_magic_link's
paste_from waits for both at once).

Offline, against the emulator (`portal-auth-emulator --port 8787`): add
`--api-host http://127.0.0.1:8787 --environment env-demo`. The emulator sends no email; the
email is in its outbox, http://127.0.0.1:8787/_emulator/outbox: open its `emailLink` in a
browser (the button of the email), or paste its `link`.
"""

from __future__ import annotations

import argparse
import sys

from portal_auth import (
    AuthenticatedResult,
    MagicLinkConfig,
    PortalAuth,
    PortalAuthError,
    TotpRequiredResult,
    Unauthorized,
    UnauthorizedReason,
    normalize_totp_code,
)


def ask_code() -> str:
    """The code the user types, as verify_totp takes it ("123 456" too); asked again until
    six digits remain."""
    while True:
        code = normalize_totp_code(input("Code from your authenticator app: "))
        if code is not None:
            return code
        print("The code is six digits.")


def sign_in(auth: PortalAuth) -> AuthenticatedResult:
    email = input("Email: ")
    print(f"A sign-in link is on its way to {email}. Open it, or paste it here.")
    print("Link: ", end="", flush=True)
    result = auth.sign_in_with_magic_link(email, paste_from=sys.stdin)
    print()
    if isinstance(result, TotpRequiredResult):
        if result.totp_link is not None:
            print("First sign-in: scan this code with your authenticator app,")
            print(result.qr_code_terminal(), end="")
            print(f"or enter this key in it by hand: {result.totp_secret}")
        while True:
            try:
                return auth.verify_totp(ask_code(), result.user_jwt)
            except Unauthorized as error:
                if error.reason is not UnauthorizedReason.TOTP_CODE_REJECTED:
                    raise  # the step expired: the user signs in again
                print(error.reason.user_message)
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
        reason = getattr(error, "reason", None)  # what the user does next, where the error says
        print(f"Sign-in failed: {reason.user_message if reason else error}", file=sys.stderr)
        return 1
    except (EOFError, KeyboardInterrupt):
        print("\nSign-in abandoned.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
