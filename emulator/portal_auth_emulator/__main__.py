"""CLI: portal-auth-emulator [--port N] [--config FILE.json] [--stop-on-stdin-eof], also
run as python -m portal_auth_emulator.

Prints one line with the base URL once listening (tests read it to await
readiness), then serves until SIGTERM or SIGINT and exits 0.
"""

import argparse
import io
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import cast

from .config import ConfigError, default_config, load_config_file
from .runtime import Emulator

_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: serves until SIGTERM, SIGINT or (with --stop-on-stdin-eof) the end of stdin; the exit status."""
    parser = argparse.ArgumentParser(
        prog="portal-auth-emulator",
        description="Local emulator of Portal's Client Auth API (127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port, 0 for an ephemeral one (default)")
    parser.add_argument("--config", help="JSON config file (default: the embedded config)")
    parser.add_argument(
        "--stop-on-stdin-eof",
        action="store_true",
        help="stop when standard input closes (a test harness that dies takes the emulator with it)",
    )
    parser.add_argument("--tls-cert", help="PEM certificate: serve https instead of http")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    args = parser.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be from 0 to 65535")
    try:
        config = load_config_file(args.config) if args.config else default_config()
    except (OSError, ConfigError) as exc:
        print(f"portal-auth-emulator: cannot load config: {exc}", file=sys.stderr)
        return 2

    # Block the stop signals before any thread starts (threads inherit the mask),
    # so that only sigwait below receives them.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    emulator = Emulator(config, port=args.port, log=True, tls=tls)
    try:
        url = emulator.start()
    except OSError as exc:
        print(f"portal-auth-emulator: cannot listen: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"portal-auth-emulator listening on {url}", flush=True)
    if args.stop_on_stdin_eof:
        threading.Thread(target=_signal_at_stdin_eof, daemon=True).start()
    signal.sigwait(_STOP_SIGNALS)
    emulator.stop()
    return 0


def _signal_at_stdin_eof() -> None:
    # The interpreter's stdin.buffer is a BufferedReader; the stubs only promise BinaryIO,
    # which has no read1.
    stdin = cast(io.BufferedReader, sys.stdin.buffer)
    while stdin.read1(4096):
        pass
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    sys.exit(main())
