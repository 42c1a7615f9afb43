"""Where sessions live: a host's own store object (its values opaque to it, its failures
transient, undecodable values deleted, compare-and-delete), the real keyring (locked, and
read by a second process), and "memory"."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import weakref

import pytest
from conftest import CALLBACK, Emulator

import portal_auth
from portal_auth import AuthenticatedResult, PortalAuth, SessionStorageFailure


class DictStore:
    """A host's store: one value, with switches that make it fail."""

    def __init__(self) -> None:
        self.value: object = None
        self.calls: list[str] = []
        self.failing: set[str] = set()
        self.threads: set[int] = set()

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        self.threads.add(threading.get_ident())
        if name in self.failing:
            raise RuntimeError(f"disk full while holding {self.value!r}")

    def get(self) -> str | None:
        self._enter("get")
        return self.value  # type: ignore[return-value]

    def set(self, raw: str) -> None:
        self._enter("set")
        self.value = raw

    def delete(self) -> None:
        self._enter("delete")
        self.value = None


def signed_in(auth: PortalAuth, emu: Emulator, env: str, email: str) -> AuthenticatedResult:
    result = auth.handle_redirect(emu.grant_redirect(env, email))
    assert isinstance(result, AuthenticatedResult)
    return result


@pytest.fixture
def open_env(emu: Emulator) -> str:
    return emu.environment(totp=False)


def test_a_host_store_keeps_the_session(make_client, emu: Emulator, open_env: str) -> None:
    store = DictStore()
    result = signed_in(make_client(open_env, storage=store), emu, open_env, "host@example.com")
    token = result.session.get_token()
    assert json.loads(str(store.value)) == {"clientSessionToken": token, "endUserId": result.session.end_user_id}
    assert threading.get_ident() not in store.threads  # called on the library's thread

    restored = make_client(open_env, storage=store).restore_session()
    assert restored is not None and restored.get_token() == token
    make_client(open_env, storage=store).clear_persisted_session()
    assert store.value is None and store.calls[-1] == "delete"


@pytest.mark.parametrize("method", ["get", "set", "delete"])
def test_a_failing_host_store_is_a_transient_failure(make_client, emu: Emulator, open_env: str, method: str) -> None:
    store = DictStore()
    auth = make_client(open_env, storage=store)
    signed_in(auth, emu, open_env, "fail@example.com")
    kept = store.value
    store.failing.add(method)
    call = {
        "get": auth.restore_session,
        "set": lambda: signed_in(auth, emu, open_env, "fail@example.com"),
        "delete": auth.clear_persisted_session,
    }[method]
    with pytest.raises(SessionStorageFailure) as raised:
        call()
    # The library's own message: nothing of the host's exception, which quoted the value.
    assert "disk full" not in str(raised.value) and str(kept) not in str(raised.value)
    assert raised.value.message == str(raised.value)
    assert store.value == kept  # nothing deleted for a transient failure


@pytest.mark.parametrize("stored", ["", "garbage", '{"clientSessionToken": ""}', "a\0b", "\udcff"])
def test_an_undecodable_value_is_deleted_and_reads_as_no_session(make_client, open_env: str, stored: object) -> None:
    store = DictStore()
    store.value = stored
    assert make_client(open_env, storage=store).restore_session() is None
    assert store.value is None and store.calls == ["get", "delete"]


def test_invalidate_deletes_only_its_own_session(make_client, emu: Emulator, open_env: str) -> None:
    store = DictStore()
    auth = make_client(open_env, storage=store)
    older = signed_in(auth, emu, open_env, "cas@example.com")
    newer = signed_in(auth, emu, open_env, "cas@example.com")
    kept = store.value
    older.session.invalidate()
    assert store.value == kept and "delete" not in store.calls
    newer.session.invalidate()
    assert store.value is None


def test_the_library_lets_go_of_the_store_when_done(emu: Emulator, open_env: str) -> None:
    store = DictStore()
    released = threading.Event()
    weakref.finalize(store, released.set)
    auth = PortalAuth(auth_environment_id=open_env, redirect_url=CALLBACK, api_host=emu.url, storage=store)
    session = signed_in(auth, emu, open_env, "release@example.com").session
    del store
    auth.close()
    gc.collect()
    assert not released.is_set()  # the session can still reach it (invalidate)
    del session
    gc.collect()
    assert released.wait(30)


def test_a_refused_client_lets_go_of_the_store_at_once() -> None:
    store = DictStore()
    released = threading.Event()
    weakref.finalize(store, released.set)
    with pytest.raises(portal_auth.InvalidArgument):
        PortalAuth(auth_environment_id="env", redirect_url="", storage=store)
    del store
    gc.collect()
    assert released.is_set()


def test_memory_storage_is_per_process(make_client, emu: Emulator, open_env: str) -> None:
    result = signed_in(make_client(open_env, storage="memory"), emu, open_env, "mem@example.com")
    restored = make_client(open_env, storage="memory").restore_session()
    assert restored is not None and restored.get_token() == result.session.get_token()
    assert make_client(open_env).restore_session() is None  # not in the keyring


def test_a_second_process_restores_the_session_from_the_keyring(make_client, emu: Emulator, open_env: str) -> None:
    result = signed_in(make_client(open_env), emu, open_env, "second@example.com")
    program = (
        "import sys\n"
        "from portal_auth import PortalAuth\n"
        "with PortalAuth(auth_environment_id=sys.argv[1], redirect_url=sys.argv[2], api_host=sys.argv[3]) as auth:\n"
        "    session = auth.restore_session()\n"
        "    print(session.end_user_id, session.get_token() == sys.argv[4])\n"
    )
    restored = subprocess.run(
        [sys.executable, "-c", program, open_env, CALLBACK, emu.url, result.session.get_token()],
        capture_output=True, text=True, timeout=60,
    )
    assert restored.stdout == f"{result.session.end_user_id} True\n", restored.stderr


def test_a_locked_keyring_is_a_storage_failure_with_the_entry_kept(
    make_client, emu: Emulator, open_env: str, keyring: str
) -> None:
    auth = make_client(open_env)
    result = signed_in(auth, emu, open_env, "locked@example.com")
    subprocess.run([keyring, "lock"], check=True)
    try:
        with pytest.raises(SessionStorageFailure, match="locked"):
            auth.restore_session()
        with pytest.raises(SessionStorageFailure, match="locked"):
            result.session.invalidate()
    finally:
        subprocess.run([keyring, "start"], check=True)  # a restarted daemon opens it unlocked
    restored = make_client(open_env).restore_session()
    assert restored is not None and restored.end_user_id == result.session.end_user_id


def test_no_secret_service_is_a_storage_failure_that_says_what_to_do(
    make_client, emu: Emulator, open_env: str, keyring: str
) -> None:
    auth = make_client(open_env)
    subprocess.run([keyring, "stop"], check=True)
    try:
        with pytest.raises(SessionStorageFailure) as raised:
            auth.restore_session()
    finally:
        subprocess.run([keyring, "start"], check=True)
    assert "Secret Service" in str(raised.value)


@pytest.mark.parametrize("stored", [b'{"clientSessionToken": "cst_1", "endUserId": "eu_1"}', 42])
def test_a_value_of_the_wrong_type_is_a_transient_failure(make_client, open_env: str, stored: object) -> None:
    """The host's mistake, not a value gone bad: nothing is deleted."""
    store = DictStore()
    store.value = stored
    with pytest.raises(SessionStorageFailure):
        make_client(open_env, storage=store).restore_session()
    assert store.value == stored and "delete" not in store.calls


@pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt, GeneratorExit])
def test_a_store_raising_beyond_exception_is_a_failure_too(
    make_client, emu: Emulator, open_env: str, kind: type[BaseException]
) -> None:
    class Raising(DictStore):
        def set(self, raw: str) -> None:
            raise kind("leaving")

    store = Raising()
    store.failing.add("get")
    auth = make_client(open_env, storage=store)
    with pytest.raises(SessionStorageFailure):
        auth.restore_session()
    with pytest.raises(SessionStorageFailure):  # persisted before return, or an error
        signed_in(auth, emu, open_env, "raising@example.com")


def test_two_applications_of_one_environment_keep_their_own_sessions(
    make_client, emu: Emulator, open_env: str, keyring: str
) -> None:
    """The application id names the keyring item and keeps it apart: a GTK app and a script
    of one environment no longer share a session, nor sign each other out."""
    editor = make_client(open_env, application_id="org.example.Editor")
    result = signed_in(editor, emu, open_env, "editor@example.com")
    script = make_client(open_env, application_id="org.example.Script")
    assert script.restore_session() is None
    signed_in(script, emu, open_env, "script@example.com")
    script.clear_persisted_session()
    again = make_client(open_env, application_id="org.example.Editor").restore_session()
    assert again is not None and again.get_token() == result.session.get_token()
    found = subprocess.run(
        ["secret-tool", "search", "--all", "application_id", "org.example.Editor", "auth_environment_id", open_env],
        capture_output=True, text=True, timeout=60,
    )
    assert f"label = org.example.Editor: Portal session ({open_env})" in found.stdout


@pytest.mark.parametrize("application_id", ["", "editor", "org.example.", "org.9example", "org.example.Edit or", 7])
def test_an_application_id_is_a_reverse_dns_name(make_client, open_env: str, application_id: object) -> None:
    with pytest.raises(portal_auth.InvalidArgument) as raised:
        make_client(open_env, application_id=application_id)
    assert raised.value.name == "application_id"
