"""Every secret the emulator issues, appended as a `kind<TAB>value` line to the file named by
PORTAL_AUTH_TEST_SECRETS_FILE when that variable is set: a test run checks every log line it
captured against all of them (scripts/log-audit.py), whichever emulator issued them."""

import os
import threading

KINDS = ("grant", "clientSessionToken", "userJwt", "totpLink", "totpSecret")

_lock = threading.Lock()


def record(kind: str, value: str) -> None:
    """Appends the secret `value` of `kind` to PORTAL_AUTH_TEST_SECRETS_FILE, when set, for the log audit."""
    path = os.environ.get("PORTAL_AUTH_TEST_SECRETS_FILE")
    if not path:
        return
    # One append per line: emulators of several processes may share the file.
    with _lock, open(path, "a", encoding="utf-8") as file:
        file.write(f"{kind}\t{value}\n")
