"""The flood figure (issue 46): how long the user's browser waits for the loopback listener of
a browser sign-in while another user floods it, with 8,000 sockets of its own and two
connect loops (scripts/connect-flood.py, run as nobody through setpriv).

    flood_bench.py

Each sample: a sign-in with the binding (in-memory storage) against the emulator, which
run.sh started (BENCH_EMULATOR); once its listener waits, the flood starts, and once the
flood is on, the browser (this process) connects to the redirect URL, sends the callback and
reads the whole answer: that wait is the sample. The callback carries `error=`, so the
sign-in ends there, with no exchange. Lines out: contender<TAB>metric<TAB>value."""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import portal_auth

SAMPLES, SOCKETS, LOOPS = 7, 8000, 2
FLOOD = Path(__file__).resolve().parent.parent / "scripts" / "connect-flood.py"


def emulator_call(base: str, path: str, body: object = None) -> Any:
    """GET (no body) or POST an emulator control endpoint; its JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/_emulator/" + path, data=data)
    request.add_header("content-type", "application/json")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def browser_wait(port: int) -> float:
    """Seconds from the browser's connect to the end of the listener's answer."""
    request = f"GET /callback?error=access_denied HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as browser:
        browser.sendall(request)
        answer = b""
        while chunk := browser.recv(65536):
            answer += chunk
    waited = time.perf_counter() - start
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"the listener answered {answer[:40]!r}")
    return waited


def sample(base: str) -> float:
    # Below the ephemeral range, which the flood's connections take.
    port = emulator_call(base, "loopback-port")["port"]
    redirect = f"http://127.0.0.1:{port}/callback"
    environment_id = f"env-{uuid.uuid4().hex[:12]}"
    emulator_call(base, "environments", {
        "id": environment_id, "allowedMethods": ["GOOGLE"], "redirectUrls": [redirect], "totpRequired": False,
        "accountAbstraction": False, "autoCreateWallet": True})
    listening = threading.Event()
    with portal_auth.PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=base,
                                storage="memory") as auth:
        auth.set_browser_opener(lambda url, ephemeral: listening.set())
        outcome: list[BaseException] = []

        def sign_in() -> None:
            try:
                auth.sign_in_with_google(timeout=300)
            except portal_auth.PortalAuthError as error:
                outcome.append(error)

        signing_in = threading.Thread(target=sign_in)
        signing_in.start()
        if not listening.wait(60):
            raise RuntimeError("the sign-in never opened its browser")
        setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        flood = subprocess.Popen([*(setpriv if os.getuid() == 0 else ["sudo", "-n", *setpriv]), "/usr/bin/python3",
                                  str(FLOOD), str(port), str(SOCKETS), str(LOOPS)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert flood.stdout is not None
            if flood.stdout.readline() != "flooding\n":
                raise RuntimeError("the flood did not start")
            waited = browser_wait(port)
        finally:
            flood.communicate("", timeout=60)
        signing_in.join(60)
        if len(outcome) != 1:
            raise RuntimeError("the callback did not end the sign-in")
    return waited


def main() -> None:
    base = os.environ["BENCH_EMULATOR"]
    waits = [sample(base) * 1e3 for _ in range(SAMPLES)]
    print(f"listener\tflood_browser_wait_median_ms\t{statistics.median(waits):.4f}", flush=True)
    print(f"listener\tflood_browser_wait_max_ms\t{max(waits):.4f}", flush=True)


if __name__ == "__main__":
    main()
