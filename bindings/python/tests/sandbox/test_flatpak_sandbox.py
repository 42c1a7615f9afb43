"""Sessions inside a Flatpak sandbox (flatpak.py): kept in libsecret's file keyring with the
Secret portal's key, never in the host's login collection, restored by a second sandboxed
process, signed out, and apart for another application id; the portal's absence said so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import CALLBACK, Emulator
from flatpak import Sandbox, desktop_portal, have_sandbox_tools
from test_browser import loopback_environment

APP = "io.portalhq.auth.SandboxedApp"
OTHER_APP = "io.portalhq.auth.OtherSandboxedApp"

pytestmark = pytest.mark.skipif(not have_sandbox_tools(), reason="bubblewrap, xdg-dbus-proxy or xdg-desktop-portal missing")

# What a sandboxed process does: one step (with the file store for "file-sign-in"), its
# outcome printed as one JSON line. No application id is given: inside the sandbox it is
# FLATPAK_ID.
IN_SANDBOX = """
import json, sys
from portal_auth import AuthenticatedResult, PortalAuth, SessionStorageFailure
step, env, host = sys.argv[1:4]
storage = {"storage": "file"} if step.startswith("file-") else {}
with PortalAuth(auth_environment_id=env, redirect_url=sys.argv[4], api_host=host, **storage) as auth:
    try:
        if step == "browser-sign-in":
            result = auth.sign_in_with_google()
            outcome = {"user": result.session.end_user_id} if isinstance(result, AuthenticatedResult) else {"other": type(result).__name__}
        elif step == "listen":
            with auth.listen_for_redirects() as listener:
                print("listening", flush=True)
                result = next(iter(listener))
            outcome = {"user": result.session.end_user_id} if isinstance(result, AuthenticatedResult) else {"other": repr(result)}
        elif step == "forward":
            outcome = {"forwarded": auth.forward_redirect(sys.argv[5]).name}
        elif step.endswith("sign-in"):
            result = auth.handle_redirect(sys.argv[5])
            outcome = {"user": result.session.end_user_id} if isinstance(result, AuthenticatedResult) else {"other": type(result).__name__}
        elif step == "restore":
            session = auth.restore_session()
            outcome = {"user": None if session is None else session.end_user_id}
        else:
            auth.clear_persisted_session()
            outcome = {"signed_out": True}
    except SessionStorageFailure as failure:
        outcome = {"reason": failure.reason.name, "message": str(failure)}
print(json.dumps(outcome))
"""


def step(sandbox: Sandbox, emu: Emulator, env: str, name: str, *extra: str, redirect: str = CALLBACK) -> dict[str, object]:
    ran = sandbox.run([sys.executable, "-c", IN_SANDBOX, name, env, emu.url, redirect, *extra])
    assert ran.returncode == 0, ran.stderr
    outcome: dict[str, object] = json.loads(ran.stdout.strip().splitlines()[-1])
    return outcome


def host_items(name: str, value: str) -> str:
    """The paths of the host keyring's items (on the test's bus) whose attribute `name` is
    `value`, unlocked and locked, as the Secret Service's SearchItems answers."""
    ran = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path",
                          "/org/freedesktop/secrets", "--method", "org.freedesktop.Secret.Service.SearchItems",
                          f"{{'{name}': '{value}'}}"], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip()


def secret_tool(sandbox: Sandbox, *arguments: str, secret: str | None = None) -> subprocess.CompletedProcess[str]:
    """secret-tool inside the sandbox (libsecret's file backend, as the library's). libsecret
    0.20 loses the portal's answer to about one call in ten, and its call then never ends
    (docs/desktop.md "Sandbox store"): such a call is stopped, and made again."""
    for _ in range(8):
        try:
            return subprocess.run(sandbox.command(["secret-tool", *arguments]), input=secret, capture_output=True,
                                  text=True, timeout=10)
        except subprocess.TimeoutExpired:
            continue
    raise AssertionError("secret-tool never ended")


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The portal, with the host's default handler of http and https URLs a browser of the
    test's (a script that loads the URL, following its redirects): it records each URL it
    was started with in the file this yields."""
    opened = tmp_path_factory.mktemp("browser") / "opened"
    browser = opened.with_name("browser")
    browser.write_text(f"#!{sys.executable}\nimport sys, urllib.request\n"
                       f"open({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n"
                       "urllib.request.urlopen(sys.argv[1], timeout=30).read()\n")
    browser.chmod(0o755)
    applications = Path(os.environ["XDG_DATA_HOME"]) / "applications"
    applications.mkdir(parents=True, exist_ok=True)
    (applications / "portal-auth-test-browser.desktop").write_text(
        f"[Desktop Entry]\nType=Application\nName=Test browser\nExec={browser} %u\n"
        "MimeType=x-scheme-handler/http;x-scheme-handler/https;\n")
    config = Path(os.environ["XDG_CONFIG_HOME"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "mimeapps.list").write_text("[Default Applications]\n"
                                          "x-scheme-handler/http=portal-auth-test-browser.desktop\n"
                                          "x-scheme-handler/https=portal-auth-test-browser.desktop\n")
    with desktop_portal("GNOME"):
        yield opened


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_a_session_is_kept_in_the_sandbox_restored_by_a_second_process_and_signed_out(
        portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    with Sandbox(APP, home) as sandbox:
        signed_in = step(sandbox, emu, env, "sign-in", emu.grant_redirect(env, "boxed@example.com"))
        assert "user" in signed_in, signed_in
        # In the app's own file keyring, encrypted: the session's JSON is not in it as text.
        assert sandbox.keyring_file.is_file()
        assert b"end_user" not in sandbox.keyring_file.read_bytes() and b"Session" not in sandbox.keyring_file.read_bytes()
        assert step(sandbox, emu, env, "restore") == signed_in
        assert step(sandbox, emu, env, "sign-out") == {"signed_out": True}
        assert step(sandbox, emu, env, "restore") == {"user": None}
    # The host's login collection holds no session: only the portal's key of the app.
    assert host_items("xdg:schema", "io.portalhq.auth.Session") == "(@ao [], @ao [])"
    assert "/org/freedesktop/secrets/collection/login/" in host_items("app_id", APP)


def test_an_undecodable_entry_reads_as_no_session_and_is_removed(portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    attributes = ["xdg:schema", "io.portalhq.auth.Session", "auth_environment_id", env, "application_id", APP]
    with Sandbox(APP, home) as sandbox:
        stored = secret_tool(sandbox, "store", "--label=planted", *attributes, secret="not a session")
        assert stored.returncode == 0, stored.stderr
        assert secret_tool(sandbox, "lookup", *attributes).stdout == "not a session"
        assert step(sandbox, emu, env, "restore") == {"user": None}
        assert secret_tool(sandbox, "lookup", *attributes).returncode != 0


def test_another_application_id_does_not_see_the_session_even_with_the_file(
        portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    with Sandbox(APP, home) as first, Sandbox(OTHER_APP, home) as second:
        signed_in = step(first, emu, env, "sign-in", emu.grant_redirect(env, "first@example.com"))
        assert "user" in signed_in, signed_in
        assert step(second, emu, env, "restore") == {"user": None}
        # The first app's file in the second's place: the second's key does not open it.
        second.keyring_file.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(first.keyring_file, second.keyring_file)
        assert step(second, emu, env, "restore") == {"user": None}
        assert step(first, emu, env, "restore") == signed_in


def test_a_locked_host_keyring_is_keyring_locked_and_no_grant_is_spent(portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    redirect = emu.grant_redirect(env, "locked@example.com")
    emu.call("DELETE", "requests")
    with Sandbox(APP, home) as sandbox:
        subprocess.run(["scripts/private-keyring.sh", "lock"], check=True, timeout=60)
        try:
            for outcome in (step(sandbox, emu, env, "restore"), step(sandbox, emu, env, "sign-in", redirect)):
                assert outcome.get("reason") == "KEYRING_LOCKED", outcome
                assert "keyring is locked" in str(outcome["message"])
            assert emu.requests("/validations") == []
        finally:
            subprocess.run(["scripts/private-keyring.sh", "unlock"], check=True, timeout=60)
        assert "user" in step(sandbox, emu, env, "sign-in", redirect)


def test_a_sandbox_with_no_session_bus_is_told_so(portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    with Sandbox(APP, home, bus=False) as sandbox:
        outcome = step(sandbox, emu, env, "restore")
    assert outcome.get("reason") == "NO_SESSION_BUS", outcome
    assert "Flatpak sandbox has no D-Bus session bus" in str(outcome["message"])


def test_a_sandbox_without_the_portal_is_told_so_and_spends_no_grant(portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    redirect = emu.grant_redirect(env, "noportal@example.com")
    emu.call("DELETE", "requests")
    with Sandbox(APP, home, talk=()) as sandbox:
        for outcome in (step(sandbox, emu, env, "restore"), step(sandbox, emu, env, "sign-in", redirect)):
            assert outcome.get("reason") == "NO_SECRET_SERVICE", outcome
            assert "Secret portal" in str(outcome["message"]) and "Flatpak" in str(outcome["message"])
    assert emu.requests("/validations") == []


def test_the_file_store_in_a_sandbox_is_the_apps_own_under_its_state_folder(portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    with Sandbox(APP, home) as sandbox:
        signed_in = step(sandbox, emu, env, "file-sign-in", emu.grant_redirect(env, "filed@example.com"))
        assert "user" in signed_in, signed_in
        # Named by FLATPAK_ID, in the app's $XDG_STATE_HOME; the keyring file untouched.
        entry = sandbox.app_home / ".local" / "state" / "portal-auth" / f"{APP}@{env.replace('.', '%2E')}.json"
        assert entry.is_file() and not sandbox.keyring_file.exists()


def test_a_browser_sign_in_in_a_sandbox_opens_the_browser_through_the_openuri_portal(
        portal: Path, emu: Emulator, home: Path) -> None:
    env, redirect = loopback_environment(emu)
    # No $BROWSER and no xdg-open in the sandbox: the portal is the way out.
    with Sandbox(APP, home, path="/nonexistent") as sandbox:
        signed_in = step(sandbox, emu, env, "browser-sign-in", redirect=redirect)
        assert "user" in signed_in, signed_in
        assert step(sandbox, emu, env, "restore") == signed_in
    # The host's browser, started by the portal, was given the authorize URL.
    assert portal.read_text().startswith(emu.url)


def test_a_redirect_is_forwarded_between_two_sandboxed_instances_through_the_apps_runtime_folder(
        portal: Path, emu: Emulator, home: Path) -> None:
    env = emu.environment(totp=False)
    # Two instances, each in a sandbox of its own: their runtime folders are apart but for
    # app/<app id>, where the channel is.
    with Sandbox(APP, home) as running, Sandbox(APP, home) as handler:
        listening = subprocess.Popen(running.command([sys.executable, "-c", IN_SANDBOX, "listen", env, emu.url, CALLBACK]),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert listening.stdout is not None and listening.stdout.readline() == "listening\n"
            assert [path.suffix for path in (running.app_runtime / "portal-auth").iterdir()].count(".sock") == 1
            forwarded = step(handler, emu, env, "forward", emu.grant_redirect(env, "forwarded@example.com"))
            assert forwarded == {"forwarded": "TAKEN"}, forwarded
            out, err = listening.communicate(timeout=60)
        finally:
            listening.kill()
            listening.wait()
        assert listening.returncode == 0, err
        assert "user" in json.loads(out.strip().splitlines()[-1])
