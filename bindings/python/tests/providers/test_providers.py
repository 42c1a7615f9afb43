"""The keyring on each Secret Service provider a Linux desktop ships (gnome-keyring,
KeePassXC with and without its confirmations, KWallet), each on a private bus:
scripts/test-providers.sh runs this module once inside `scripts/private-keyring.sh run
--provider NAME`, which names the provider in PORTAL_AUTH_TEST_PROVIDER. Outside one it is
not collected (the main pytest run leaves this folder out).

What gnome-keyring does, every provider does: a new process restores, sign-out removes
the item, two apps stay apart; a locked store is KEYRING_LOCKED on every path; a prompt is
dismissed at once unless the client allows it, and then waited for with a bound; and a
store that cannot take a session spends no grant."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from conftest import CALLBACK, Emulator, SecretServiceCalls
from portal_auth import AuthenticatedResult, MagicLinkConfig, PortalAuth, SessionStorageFailure, StorageFailureReason

PROVIDER = os.environ.get("PORTAL_AUTH_TEST_PROVIDER", "")
# Providers that ask the user before a new client reads an item (KeePassXC's default).
CONFIRMS_ACCESS = PROVIDER == "keepassxc"
# What a locked store's message calls it, by provider.
LOCKED_NAMES = {"gnome": "login keyring", "keepassxc": "KeePassXC database", "keepassxc-noconfirm": "KeePassXC database",
                "kwallet": "KDE wallet"}
# Each call of this module must end well within this (no call waits on a dialog unbounded).
BOUND = 20.0

# gnome-keyring without a login collection, KWallet without its encryption plugins: nothing
# can be stored (their own tests, below).
NO_COLLECTION = PROVIDER == "gnome-no-login"
NO_ENCRYPTION = PROVIDER == "kwallet-noqca"

pytestmark = pytest.mark.skipif(not PROVIDER, reason="runs inside scripts/private-keyring.sh run --provider NAME")
needs_a_collection = pytest.mark.skipif(NO_COLLECTION or NO_ENCRYPTION, reason="the provider can store nothing")


@pytest.fixture
def open_env(emu: Emulator) -> str:
    return emu.environment(totp=False)


@pytest.fixture
def app_id() -> str:
    return f"io.portalhq.auth.Provider-{uuid.uuid4().hex[:8]}"


def signed_in(auth: PortalAuth, emu: Emulator, env: str) -> AuthenticatedResult:
    result = auth.handle_redirect(emu.grant_redirect(env, f"{uuid.uuid4().hex[:8]}@example.com"))
    assert isinstance(result, AuthenticatedResult)
    return result


def control(keyring: str, command: str) -> None:
    subprocess.run([keyring, command], check=True, timeout=120)


# What a new process sees: "<end user id> <token matches>", "none", or "failure <REASON>".
NEW_PROCESS = (
    "import sys\n"
    "from portal_auth import PortalAuth, SessionStorageFailure\n"
    "env, url, host, app, token, action, prompt = sys.argv[1:]\n"
    "with PortalAuth(auth_environment_id=env, redirect_url=url, api_host=host, application_id=app,\n"
    "                keyring_prompt_timeout=float(prompt) or None) as auth:\n"
    "    try:\n"
    "        if action == 'restore':\n"
    "            session = auth.restore_session()\n"
    "            print('none' if session is None else f'{session.end_user_id} {session.get_token() == token}')\n"
    "        else:\n"
    "            auth.clear_persisted_session()\n"
    "            print('cleared')\n"
    "    except SessionStorageFailure as failure:\n"
    "        print('failure', failure.reason.name, file=sys.stdout)\n"
    "        print(failure, file=sys.stderr)\n"
)


def in_new_process(emu: Emulator, env: str, app: str, action: str = "restore", token: str = "",
                   prompt: float = 0) -> str:
    ran = subprocess.run(
        [sys.executable, "-c", NEW_PROCESS, env, CALLBACK, emu.url, app, token, action, str(prompt)],
        capture_output=True, text=True, timeout=BOUND + prompt,
    )
    assert ran.returncode == 0, ran.stderr
    # The failure's message, shown with a failing test's output.
    sys.stderr.write(ran.stderr)
    return ran.stdout.strip()


@needs_a_collection
def test_a_session_persists_restores_in_a_new_process_and_signs_out(
    make_client, emu: Emulator, open_env: str, app_id: str
) -> None:
    auth = make_client(open_env, application_id=app_id)
    result = signed_in(auth, emu, open_env)
    token = result.session.get_token()
    restored = auth.restore_session()
    assert restored is not None and restored.get_token() == token
    seen = in_new_process(emu, open_env, app_id, token=token)
    if CONFIRMS_ACCESS:
        # A new client's read needs the user's confirmation: refused at once, not a hang.
        assert seen == "failure KEYRING_NEEDS_CONFIRMATION"
    else:
        assert seen == f"{result.session.end_user_id} True"
    auth.clear_persisted_session()
    assert auth.restore_session() is None
    assert in_new_process(emu, open_env, app_id) == "none"


@needs_a_collection
def test_two_applications_keep_their_own_sessions(make_client, emu: Emulator, open_env: str, app_id: str) -> None:
    first = signed_in(make_client(open_env, application_id=app_id), emu, open_env)
    other = make_client(open_env, application_id=app_id + "-Other")
    assert other.restore_session() is None
    second = signed_in(other, emu, open_env)
    other.clear_persisted_session()
    restored = make_client(open_env, application_id=app_id).restore_session()
    assert restored is not None and restored.get_token() == first.session.get_token()
    assert second.session.get_token() != first.session.get_token()


@needs_a_collection
def test_a_prompt_is_dismissed_at_once_or_waited_for_with_its_bound(
    make_client, emu: Emulator, open_env: str, app_id: str, keyring: str
) -> None:
    result = signed_in(make_client(open_env, application_id=app_id), emu, open_env)
    token = result.session.get_token()
    started = time.monotonic()
    never = in_new_process(emu, open_env, app_id, token=token)
    if not CONFIRMS_ACCESS:
        assert never == f"{result.session.end_user_id} True"
        return
    assert never == "failure KEYRING_NEEDS_CONFIRMATION"
    dismissed_in = time.monotonic() - started
    # Allowed, nobody answers the dialog (no one is at this offscreen KeePassXC): the call
    # ends at its bound with the same reason, the dialog dismissed.
    started = time.monotonic()
    try:
        assert in_new_process(emu, open_env, app_id, token=token, prompt=2.0) == "failure KEYRING_NEEDS_CONFIRMATION"
        waited = time.monotonic() - started
        assert waited >= 2.0 > dismissed_in, (waited, dismissed_in)
    finally:
        # KeePassXC 2.7.4 keeps its access dialog open once the prompt is dismissed (its
        # Service.Lock then waits on it): the next test meets a KeePassXC started anew.
        control(keyring, "stop")
        control(keyring, "start")


@needs_a_collection
def test_a_locked_store_is_locked_on_every_path_and_spends_nothing(
    make_client, emu: Emulator, open_env: str, app_id: str, keyring: str
) -> None:
    auth = make_client(open_env, application_id=app_id)
    result = signed_in(auth, emu, open_env)
    token, end_user_id = result.session.get_token(), result.session.end_user_id
    fresh = emu.grant_redirect(open_env, "locked@example.com")
    emu.call("DELETE", "requests")
    control(keyring, "lock")
    try:
        for call in (auth.restore_session, auth.clear_persisted_session, result.session.invalidate,
                     lambda: auth.handle_redirect(fresh)):
            started = time.monotonic()
            with pytest.raises(SessionStorageFailure) as raised:
                call()
            assert raised.value.reason is StorageFailureReason.KEYRING_LOCKED, raised.value
            assert time.monotonic() - started < BOUND
            # The message names the provider, and what to do there (Seahorse is GNOME's).
            assert LOCKED_NAMES[PROVIDER] in str(raised.value), raised.value
            assert "Seahorse" not in str(raised.value) or PROVIDER == "gnome", raised.value
        # The grant was never sent.
        assert emu.requests("/validations") == []
        # The item is still there: once unlocked, a new process of the app finds it (this one
        # knows of the invalidation).
        control(keyring, "unlock")
        seen = in_new_process(emu, open_env, app_id, token=token)
        expected = "failure KEYRING_NEEDS_CONFIRMATION" if CONFIRMS_ACCESS else f"{end_user_id} True"
        assert seen == expected
    finally:
        control(keyring, "unlock")
    # The invalidation that failed is finished by the next restore, and the same redirect
    # signs in now.
    assert auth.restore_session() is None
    assert isinstance(auth.handle_redirect(fresh), AuthenticatedResult)


@needs_a_collection
def test_no_secret_service_spends_no_grant(make_client, emu: Emulator, open_env: str, app_id: str, keyring: str) -> None:
    auth = make_client(open_env, application_id=app_id)
    redirect = emu.grant_redirect(open_env, "stopped@example.com")
    emu.call("DELETE", "requests")
    # The one-call sign-ins, on a loopback redirect URL: no browser opens, no email goes.
    opened: list[str] = []
    loopback = PortalAuth(auth_environment_id=open_env, redirect_url="http://127.0.0.1:9/callback", api_host=emu.url,
                          magic_link=MagicLinkConfig(from_email="hello@auth.example.com", template_id="tmpl"),
                          application_id=app_id)
    loopback.set_browser_opener(lambda url, ephemeral: opened.append(url))
    control(keyring, "stop")
    try:
        with pytest.raises(SessionStorageFailure) as raised:
            auth.handle_redirect(redirect)
        assert raised.value.reason is StorageFailureReason.NO_SECRET_SERVICE
        for sign_in in (loopback.sign_in_with_google, lambda: loopback.sign_in_with_magic_link("stopped@example.com")):
            with pytest.raises(SessionStorageFailure) as raised:
                sign_in()
            assert raised.value.reason is StorageFailureReason.NO_SECRET_SERVICE
        assert opened == []
        assert emu.requests("/validations") == [] and emu.requests("/oauth/urls") == [] and emu.requests("/magic-links") == []
    finally:
        loopback.close()
        control(keyring, "start")
    assert isinstance(auth.handle_redirect(redirect), AuthenticatedResult)


@pytest.mark.skipif(not NO_COLLECTION, reason="for a provider without a default collection")
def test_without_a_default_collection_nothing_is_spent(make_client, emu: Emulator, open_env: str, app_id: str) -> None:
    auth = make_client(open_env, application_id=app_id)
    redirect = emu.grant_redirect(open_env, "nowhere@example.com")
    emu.call("DELETE", "requests")
    with pytest.raises(SessionStorageFailure, match="no default collection") as raised:
        auth.handle_redirect(redirect)
    assert raised.value.reason is StorageFailureReason.NO_SECRET_SERVICE
    assert emu.requests("/validations") == []
    # Nothing can be stored there, so nothing is: no session, and a sign-out has nothing to do.
    assert auth.restore_session() is None
    auth.clear_persisted_session()


@pytest.mark.skipif(PROVIDER != "gnome", reason="the round trips are counted on gnome-keyring")
def test_a_restore_and_a_persist_cost_libsecrets_own_round_trips(
    make_client, emu: Emulator, open_env: str, app_id: str, secret_service_calls: SecretServiceCalls
) -> None:
    auth = make_client(open_env, application_id=app_id)
    signed_in(auth, emu, open_env)
    assert auth.restore_session() is not None
    secret_service_calls.counted()
    # Steady state: the search, and the secrets it found.
    assert auth.restore_session() is not None
    assert secret_service_calls.counted() == {
        "org.freedesktop.Secret.Service.SearchItems": 1, "org.freedesktop.Secret.Service.GetSecrets": 1}
    # A sign-in: before the grant is sent, the store is asked whether it can take the
    # session (the collection's lock: gnome-keyring's items open with it); then the persist
    # is CreateItem alone.
    signed_in(auth, emu, open_env)
    assert secret_service_calls.counted() == {
        "org.freedesktop.DBus.Properties.Get": 1, "org.freedesktop.Secret.Collection.CreateItem": 1}


@pytest.mark.skipif(not NO_ENCRYPTION, reason="for KWallet without its encryption plugins")
def test_a_provider_that_cannot_encrypt_says_so_and_nothing_is_spent(
    make_client, emu: Emulator, open_env: str, app_id: str
) -> None:
    auth = make_client(open_env, application_id=app_id)
    for call in (auth.restore_session, auth.clear_persisted_session):
        with pytest.raises(SessionStorageFailure, match="libqca-qt5-2-plugins") as raised:
            call()
        assert raised.value.reason is StorageFailureReason.KEYRING_ENCRYPTION_FAILED
    redirect = emu.grant_redirect(open_env, "unencrypted@example.com")
    emu.call("DELETE", "requests")
    with pytest.raises(SessionStorageFailure) as raised:
        auth.handle_redirect(redirect)
    assert raised.value.reason is StorageFailureReason.KEYRING_ENCRYPTION_FAILED
    assert emu.requests("/validations") == []
