"""The benchmark server's answers, taken from the emulator (so they have the real shapes):
GET /methods and a signed-in grant exchange of an environment without TOTP. Writes
methods.json and grant.json into the folder given.

    PYTHONPATH=emulator python3 bench/responses.py FOLDER"""

import json
import sys
import urllib.request
import uuid
from pathlib import Path

from portal_auth_emulator import Emulator

ENVIRONMENT = {
    "id": "env-bench",
    "allowedMethods": ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"],
    "redirectUrls": ["myapp://auth/callback"],
    "totpRequired": False,
}


def call(base: str, method: str, path: str, body: object = None) -> bytes:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={
            "x-portal-auth-environment-id": "env-bench",
            "Accept": "application/json",
            "Content-Type": "application/json",
            "X-Portal-Trace-Id": str(uuid.uuid4()),
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return bytes(response.read())


def main(folder: Path) -> None:
    emulator = Emulator({"environments": [ENVIRONMENT]})
    base = emulator.start()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "methods.json").write_bytes(call(base, "GET", "/api/v3/auth/methods"))
        grant = json.loads(call(base, "POST", "/_emulator/grants", {"environmentId": "env-bench", "email": "bench@example.com", "kind": "magic"}))
        (folder / "grant.json").write_bytes(call(base, "POST", "/api/v3/auth/magic-links/validations", {"token": grant["token"]}))
    finally:
        emulator.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
