#!/usr/bin/env python3
"""The log audit of a test run: every line the library logged (each harness appends to
PORTAL_AUTH_TEST_LOG_FILE as `harness<TAB>level<TAB>message`) is checked against every secret
the emulators issued (appended to PORTAL_AUTH_TEST_SECRETS_FILE as `kind<TAB>value`): no
grant, Client Session Token, userJwt, TOTP link or TOTP secret may appear, as issued or
percent-encoded. It cannot pass vacuously: every harness must have logged and every kind of
secret must have been issued. Ends with a count line.

    scripts/log-audit.py LOG_FILE SECRETS_FILE
"""

import sys
from pathlib import Path
from urllib.parse import quote

HARNESSES = ("swift", "c", "python", "cpp", "glib", "qt")
KINDS = ("grant", "clientSessionToken", "userJwt", "totpLink", "totpSecret")


def main(log_file: str, secrets_file: str) -> int:
    log = Path(log_file).read_text(encoding="utf-8", errors="replace") if Path(log_file).exists() else ""
    lines = log.splitlines()
    issued: dict[str, set[str]] = {kind: set() for kind in KINDS}
    if Path(secrets_file).exists():
        for line in Path(secrets_file).read_text(encoding="utf-8").splitlines():
            kind, _, value = line.partition("\t")
            if kind not in issued or not value:
                print(f"FAILED: unexpected line in {secrets_file}: kind {kind!r}", file=sys.stderr)
                return 1
            issued[kind].add(value)

    passed = failed = 0

    def check(ok: bool, what: str) -> None:
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok: {what}")
        else:
            failed += 1
            print(f"FAILED: {what}", file=sys.stderr)

    for harness in HARNESSES:
        count = sum(1 for line in lines if line.startswith(harness + "\t"))
        check(count > 0, f"the {harness} tests logged {count} lines")
    for kind in KINDS:
        values = issued[kind]
        leaked = [value for value in values if value in log or quote(value, safe="") in log]
        check(bool(values) and not leaked, f"none of the {len(values)} {kind} values issued is in a log line")
        for value in leaked:
            where = next(number for number, line in enumerate(lines, 1) if value in line or quote(value, safe="") in line)
            # Name the line, never print the secret itself.
            print(f"  a {kind} is in log line {where}", file=sys.stderr)
    print(f"log-audit: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
