"""Every binding's table of codes and reasons (Python, Rust, C++, GLib) is what
scripts/generate-tables.py makes of include/portal_auth.h, so that a code or a reason added
to the header reaches each binding by running that script. The check is shown to fail on a
header that differs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]
HEADER = REPOSITORY / "include" / "portal_auth.h"
COMMAND = "scripts/generate-tables.py"


def differing(header: Path, into: Path) -> tuple[list[str], list[str]]:
    """The files the script writes from `header` into the folder `into`, and those of them
    that differ from the repository's, by their paths in it."""
    subprocess.run([sys.executable, str(REPOSITORY / COMMAND), "--header", str(header), "--into", str(into)],
                   check=True, cwd=REPOSITORY)
    written = sorted(str(path.relative_to(into)) for path in into.rglob("*") if path.is_file())
    return written, [path for path in written if (into / path).read_bytes() != (REPOSITORY / path).read_bytes()]


def test_every_binding_s_table_is_generated_from_the_header(tmp_path: Path) -> None:
    written, stale = differing(HEADER, tmp_path)
    assert len(written) >= 7
    assert stale == [], f"{', '.join(stale)} differ from what include/portal_auth.h gives: run {COMMAND}"


def test_a_reason_added_to_the_header_changes_every_binding_s_table(tmp_path: Path) -> None:
    last = "PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED = 52"
    text = HEADER.read_text(encoding="utf-8")
    assert last in text
    header = tmp_path / "portal_auth.h"
    header.write_text(text.replace(last, f"{last},\n    /** Added for the test. */\n    PORTAL_AUTH_REASON_NEW = 53", 1),
                      encoding="utf-8")
    written, stale = differing(header, tmp_path / "generated")
    assert stale == written
