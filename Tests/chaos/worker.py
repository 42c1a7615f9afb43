"""One process of the app in a chaos trial: one client of the shared environment and store,
making the calls of its plan one after another through the binding. Each call is a line of
JSON on stdout as it starts and one as it ends; a session appears there as its token's
fingerprint, never as the token. SIGUSR1 writes every thread's stack to stderr (the driver
asks for it before it ends a call that hangs).

    python3 worker.py SPEC   SPEC: JSON {number, operations, email, store, folder, api,
                             environment, application}
"""

from __future__ import annotations

import faulthandler
import hashlib
import json
import os
import signal
import sys
import time
import urllib.parse
import urllib.request
from typing import Any

from portal_auth import AuthenticatedResult, PortalAuth, PortalAuthError, PortalSession, SessionStorageFailure

CALLBACK = "myapp://auth/callback"
# Far below the driver's bound on a call: a held emulator answers once it goes on.
REQUEST_TIMEOUT = 5.0


def fingerprint(session: PortalSession) -> str:
    """Names a session's token in the logs without carrying it."""
    return hashlib.sha256(session.get_token().encode()).hexdigest()[:12]


def emit(record: dict[str, Any]) -> None:
    os.write(1, (json.dumps(record) + "\n").encode())


class Worker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        store = {"storage": "file", "file_storage_path": spec["folder"]} if spec["store"] == "file" else {}
        self.auth = PortalAuth(
            auth_environment_id=spec["environment"], redirect_url=CALLBACK, api_host=spec["api"],
            application_id=spec["application"], connect_timeout=2.0, request_timeout=REQUEST_TIMEOUT, **store,
        )
        # The session this process holds (from its last sign-in or restore) and its fingerprint.
        self.held: tuple[PortalSession, str] | None = None

    def grant_redirect(self) -> str | None:
        """A fresh magic-link grant from the emulator, as the user's email carries it; None
        while the emulator is down."""
        body = json.dumps({"environmentId": self.spec["environment"], "email": self.spec["email"], "kind": "magic"})
        request = urllib.request.Request(self.spec["api"] + "/_emulator/grants", data=body.encode(), method="POST",
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
                token = json.loads(response.read())["token"]
        except (OSError, ValueError, KeyError):
            return None
        return f"{CALLBACK}?token={urllib.parse.quote(token)}&authMethod=EMAIL_MAGIC_LINK"

    def run(self, index: int, kind: str) -> None:
        redirect = self.grant_redirect() if kind == "sign_in" else None
        if (kind == "sign_in" and redirect is None) or (kind == "invalidate" and self.held is None):
            emit({"op": index, "kind": kind, "phase": "skip", "t": time.monotonic()})
            return
        record: dict[str, Any] = {"op": index, "kind": kind, "phase": "start", "t": time.monotonic()}
        if kind == "invalidate" and self.held is not None:
            record["token"] = self.held[1]
        emit(record)
        try:
            token = self.call(kind, redirect)
        except PortalAuthError as error:
            reason = getattr(error, "reason", None)
            end = {"outcome": "error", "error": type(error).__name__, "reason": None if reason is None else reason.name,
                   "storage": isinstance(error, SessionStorageFailure)}
        else:
            end = {"outcome": "ok", "token": token}
        emit({**record, **end, "phase": "end", "start": record["t"], "t": time.monotonic()})

    def call(self, kind: str, redirect: str | None) -> str | None:
        """Makes the call; the fingerprint of the session it gives or acts on."""
        if kind == "sign_in" and redirect is not None:
            result = self.auth.handle_redirect(redirect)
            assert isinstance(result, AuthenticatedResult), "the chaos environment asks no TOTP"
            self.held = (result.session, fingerprint(result.session))
            return self.held[1]
        if kind == "restore":
            session = self.auth.restore_session()
            self.held = None if session is None else (session, fingerprint(session))
            return None if self.held is None else self.held[1]
        if kind == "invalidate" and self.held is not None:
            session, token = self.held
            self.held = None
            session.invalidate()
            return token
        self.auth.clear_persisted_session()
        return None


def log_to_audit() -> None:
    """With PORTAL_AUTH_TEST_LOG_FILE set (make test), the library's log lines join the run's
    log audit, as the Python tests' do."""
    path = os.environ.get("PORTAL_AUTH_TEST_LOG_FILE")
    if not path:
        return
    import logging

    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter("python\t%(levelname)s\t%(message)s"))
    logger = logging.getLogger("portal_auth")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def main() -> None:
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    log_to_audit()
    spec = json.loads(sys.argv[1])
    worker = Worker(spec)
    for index, kind in enumerate(spec["operations"]):
        worker.run(index, kind)
    worker.auth.close()


if __name__ == "__main__":
    main()
