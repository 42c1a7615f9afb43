"""Later, in another run of the app: the session kept in the desktop keyring, restored
without the network; `--sign-out` invalidates it.

    python examples/restore.py --environment YOUR_ENVIRONMENT_ID [--sign-out]
"""

from __future__ import annotations

import argparse
import sys

from portal_auth import PortalAuth, PortalAuthError


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--environment", required=True, help="your Portal auth environment id")
    parser.add_argument("--api-host", default="api.portalhq.io")
    parser.add_argument("--redirect-url", default="myapp://auth/callback")
    parser.add_argument("--sign-out", action="store_true", help="invalidate the session")
    args = parser.parse_args()
    try:
        with PortalAuth(
            auth_environment_id=args.environment, redirect_url=args.redirect_url, api_host=args.api_host
        ) as auth:
            session = auth.restore_session()
            if session is None:
                print("Not signed in.")
                return 1
            if args.sign_out:
                session.invalidate()
                print(f"Signed out {session.end_user_id}.")
            else:
                print(f"Signed in as {session.end_user_id}.")
            return 0
    except PortalAuthError as error:
        print(f"Could not read the session: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
