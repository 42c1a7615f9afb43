"""The library's log lines reach the `portal_auth` logger at every level, filtered by the
logger's level, and never carry a secret."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from conftest import Emulator

from portal_auth import AuthenticatedResult, TotpRequiredResult


def test_log_lines_reach_the_logger_without_secrets(
    make_client, emu: Emulator, env: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="portal_auth")
    auth = make_client(env)
    auth.send_magic_link("logged@example.com")
    link = emu.outbox_link("logged@example.com")
    step = auth.handle_redirect(link)
    assert isinstance(step, TotpRequiredResult) and step.totp_link
    code = emu.totp_code(env, "logged@example.com")
    result = auth.verify_totp(code, step.user_jwt)
    assert isinstance(result, AuthenticatedResult)
    auth.handle_redirect(link)  # a replay, logged at debug level

    records = [record for record in caplog.records if record.name == "portal_auth"]
    assert {logging.DEBUG, logging.INFO} <= {record.levelno for record in records}
    text = "\n".join(record.getMessage() for record in records)
    assert result.session.end_user_id in text
    grant = link.split("token=")[1].split("&")[0]
    for secret in [result.session.get_token(), grant, step.user_jwt, step.totp_link, code]:
        assert secret not in text


def test_the_logger_level_filters(make_client, env: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="portal_auth")
    make_client(env).send_magic_link("quiet@example.com")
    assert [record for record in caplog.records if record.name == "portal_auth"] == []
    caplog.set_level(logging.INFO, logger="portal_auth")
    make_client(env).send_magic_link("loud@example.com")
    assert "Magic link sent." in [record.getMessage() for record in caplog.records]


def _run_with_an_undecodable_store(emu: Emulator, body: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """Runs `body` in a process of its own, with `auth`, a client whose store holds an entry
    that does not decode: restoring it logs a warning."""
    program = (
        prelude + "import sys\n"
        "from portal_auth import PortalAuth\n"
        "class Store:\n"
        "    def get(self): return 'not a session'\n"
        "    def set(self, raw): pass\n"
        "    def delete(self): pass\n"
        "with PortalAuth(auth_environment_id=sys.argv[1], redirect_url='myapp://auth/callback',\n"
        "                api_host=sys.argv[2], storage=Store()) as auth:\n" + body
    )
    env = emu.environment(totp=False)
    return subprocess.run([sys.executable, "-c", program, env, emu.url], capture_output=True, text=True, timeout=60)


def test_silent_unless_the_application_configures_logging(emu: Emulator) -> None:
    """Like the C library, the binding prints nothing by itself, warnings included."""
    body = "    print(auth.restore_session())\n"
    quiet = _run_with_an_undecodable_store(emu, body)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "None\n", "")
    loud = _run_with_an_undecodable_store(emu, body, prelude="import logging; logging.basicConfig()\n")
    assert "WARNING:portal_auth:" in loud.stderr


def test_logging_is_not_imported_for_the_application_but_serves_it_once_imported(emu: Emulator) -> None:
    """Importing `logging` costs more than the rest of the package's import, and until the
    application imports it no handler can exist: the binding never imports it itself, and
    picks the logger up on the first call after the application has."""
    ran = _run_with_an_undecodable_store(emu, (
        "    auth.restore_session()\n"
        "    print('logging' in sys.modules)\n"
        "    import logging\n"
        "    logging.basicConfig()\n"
        "    auth.restore_session()\n"
    ))
    assert (ran.returncode, ran.stdout) == (0, "False\n")
    assert "WARNING:portal_auth:" in ran.stderr
