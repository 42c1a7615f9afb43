"""Signs a user in by magic link, with TOTP two-factor (enrolling an authenticator app on the
first sign-in), and keeps the session in the desktop keyring.

    python examples/sign_in.py --environment YOUR_ENVIRONMENT_ID \
        --redirect-url http://127.0.0.1:8765/callback

With a loopback redirect URL that the environment allows, the browser the user opens the
email in brings the link back and the program finishes by itself; with a custom scheme
(the default, myapp://auth/callback) the user pastes the link. Either way the link may be
pasted, for an email opened on another device.

Offline, against the emulator (`portal-auth-emulator --port 8787`): add
`--api-host http://127.0.0.1:8787 --environment env-demo`. The emulator sends no email; the
email is in its outbox, http://127.0.0.1:8787/_emulator/outbox: open its `emailLink` in a
browser (the button of the email), or paste its `link`.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading

from portal_auth import (
    AuthenticatedResult,
    MagicLinkConfig,
    PortalAuth,
    PortalAuthError,
    SignInUnavailable,
    SignInUnavailableReason,
    TotpRequiredResult,
)

Result = AuthenticatedResult | TotpRequiredResult
# What the program waits for: ("line", a line of input, or None once input ended) and
# ("browser", the magic-link sign-in's result or error).
Event = tuple[str, "str | Result | PortalAuthError | None"]


def read_lines(events: queue.SimpleQueue[Event]) -> None:
    """Standard input, line by line, on a thread of its own: the program waits for a pasted
    link and for the browser at once."""
    for line in sys.stdin:
        events.put(("line", line.strip()))
    events.put(("line", None))


def ask(events: queue.SimpleQueue[Event], prompt: str) -> str:
    print(prompt, end="", flush=True)
    while True:
        kind, value = events.get()
        if kind == "line":
            if not isinstance(value, str):
                raise EOFError
            return value


def wait_for_browser(auth: PortalAuth, email: str, events: queue.SimpleQueue[Event]) -> None:
    try:
        events.put(("browser", auth.sign_in_with_magic_link(email)))
    except PortalAuthError as error:
        events.put(("browser", error))


def magic_link(auth: PortalAuth, events: queue.SimpleQueue[Event]) -> Result:
    """In one call when the redirect URL is loopback (the browser brings the link back); a
    pasted link completes it too. With a custom scheme the link is sent, and pasted."""
    email = ask(events, "Email: ")
    threading.Thread(target=wait_for_browser, args=(auth, email, events), daemon=True).start()
    print(f"A sign-in link is on its way to {email}. Open it, or paste it here.")
    print("Link: ", end="", flush=True)
    browser = True  # the browser may still bring the link
    while True:
        kind, value = events.get()
        if kind == "browser":
            if isinstance(value, SignInUnavailable) and value.reason is SignInUnavailableReason.REDIRECT_NOT_LOOPBACK:
                auth.send_magic_link(email)  # a custom scheme: nothing was sent yet
                browser = False
                continue
            if isinstance(value, PortalAuthError):
                raise value
            assert isinstance(value, (AuthenticatedResult, TotpRequiredResult))
            print()
            return value
        if not isinstance(value, str):
            if browser:
                continue  # nothing to paste: the browser may still come
            raise EOFError
        pasted = auth.handle_redirect(value)
        if pasted is not None:
            return pasted
        print("That is not a sign-in link of this app. Link: ", end="", flush=True)


def sign_in(auth: PortalAuth) -> AuthenticatedResult:
    events: queue.SimpleQueue[Event] = queue.SimpleQueue()
    threading.Thread(target=read_lines, args=(events,), daemon=True).start()
    result = magic_link(auth, events)
    if isinstance(result, TotpRequiredResult):
        if result.totp_link is not None:
            print("First sign-in: scan this code with your authenticator app,")
            print(result.qr_code_terminal(), end="")
            print(f"or enter this key in it by hand: {result.totp_secret}")
        result = auth.verify_totp(ask(events, "Code from your authenticator app: "), result.user_jwt)
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
