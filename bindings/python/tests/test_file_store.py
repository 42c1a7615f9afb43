"""The file store (storage="file"), with no session bus: a plain file per application and
environment in a folder of the user's alone, written whole, removed at sign-out, refused
when the folder is not safe, and asked before a grant is spent."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CALLBACK, Emulator
from portal_auth import AuthenticatedResult, InvalidArgument, PortalAuth, SessionStorageFailure, StorageFailureReason

APP = "io.portalhq.auth.PythonFileStore"

NEW_PROCESS = (
    "import sys\n"
    "from portal_auth import PortalAuth\n"
    "env, url, host, app, folder = sys.argv[1:]\n"
    "with PortalAuth(auth_environment_id=env, redirect_url=url, api_host=host, application_id=app,\n"
    "                storage='file', file_storage_path=folder) as auth:\n"
    "    session = auth.restore_session()\n"
    "    print('none' if session is None else session.end_user_id)\n"
)


@pytest.fixture(autouse=True)
def no_session_bus(monkeypatch: pytest.MonkeyPatch) -> None:
    """The file store needs no D-Bus: the tests run without one (the new processes too)."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)


def file_client(emu: Emulator, env: str, folder: Path) -> PortalAuth:
    return PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, application_id=APP,
                      storage="file", file_storage_path=str(folder))


def restored_in_new_process(emu: Emulator, env: str, folder: Path) -> str:
    ran = subprocess.run([sys.executable, "-c", NEW_PROCESS, env, CALLBACK, emu.url, APP, str(folder)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip()


def test_a_session_persists_in_a_file_restores_in_a_new_process_and_signs_out(emu: Emulator, tmp_path: Path) -> None:
    env = emu.environment(totp=False)
    folder = tmp_path / "state" / "portal-auth"
    with file_client(emu, env, folder) as auth:
        result = auth.handle_redirect(emu.grant_redirect(env, "file@example.com"))
        assert isinstance(result, AuthenticatedResult)
        entry = folder / f"{APP}@{env.replace('.', '%2E')}.json"
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(entry.stat().st_mode) == 0o600
        assert restored_in_new_process(emu, env, folder) == result.session.end_user_id
        auth.clear_persisted_session()
        assert not entry.exists()
        assert restored_in_new_process(emu, env, folder) == "none"


def test_a_folder_open_to_others_is_refused_and_spends_nothing(emu: Emulator, tmp_path: Path) -> None:
    env = emu.environment(totp=False)
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    redirect = emu.grant_redirect(env, "refused@example.com")
    emu.call("DELETE", "requests")
    with file_client(emu, env, folder) as auth:
        for call in (auth.restore_session, lambda: auth.handle_redirect(redirect)):
            with pytest.raises(SessionStorageFailure, match="mode 0700") as raised:
                call()
            assert raised.value.reason is StorageFailureReason.FILE_STORE_UNSAFE
    assert emu.requests("/validations") == []


def test_the_folder_must_be_an_absolute_path() -> None:
    with pytest.raises(InvalidArgument, match="file_storage_path"):
        PortalAuth(auth_environment_id="env", redirect_url=CALLBACK, storage="file", file_storage_path="relative/folder")
