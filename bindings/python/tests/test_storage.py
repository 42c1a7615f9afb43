"""Where sessions live: a host's own store object (its values opaque to it, its failures
transient, undecodable values deleted, compare-and-delete), the real keyring (locked, and
read by a second process), and "memory"."""

from __future__ import annotations

import gc
import json
import logging
import os
import subprocess
import sys
import threading
import urllib.parse
import weakref

import pytest
from conftest import CALLBACK, FROM_EMAIL, TEMPLATE_ID, Emulator, SecretServiceCalls, keyring_entry, store_in_keyring
from test_browser import Browser, loopback_environment

import portal_auth
from portal_auth import (
    AuthenticatedResult,
    MagicLinkConfig,
    PortalAuth,
    PortalSession,
    SessionInvalidated,
    SessionStorageFailure,
    StorageFailureReason,
)


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
    assert raised.value.reason is StorageFailureReason.HOST_STORAGE_FAILED
    # The library's own message: nothing of the host's exception, which quoted the value.
    assert "disk full" not in str(raised.value) and str(kept) not in str(raised.value)
    assert raised.value.message == str(raised.value)
    assert store.value == kept  # nothing deleted for a transient failure


def cleared_warnings(caplog: pytest.LogCaptureFixture, environment_id: str) -> list[str]:
    return [
        record.getMessage() for record in caplog.records
        if record.name == "portal_auth" and record.levelno == logging.WARNING
        and environment_id in record.getMessage() and "cleared" in record.getMessage()
    ]


@pytest.mark.parametrize("stored", ["", "garbage", '{"clientSessionToken": ""}', "a\0b", "\udcff"])
def test_an_undecodable_value_is_deleted_and_reads_as_no_session(
    make_client, open_env: str, stored: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="portal_auth")
    store = DictStore()
    store.value = stored
    assert make_client(open_env, storage=store).restore_session() is None
    assert store.value is None and store.calls == ["get", "delete"]
    warnings = cleared_warnings(caplog, open_env)
    assert warnings == [f"An undecodable stored session of environment {open_env} was cleared."]


def test_a_self_heal_whose_delete_fails_is_a_failure_and_keeps_the_value(
    make_client, open_env: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="portal_auth")
    store = DictStore()
    store.value = "garbage"
    store.failing.add("delete")
    auth = make_client(open_env, storage=store)
    with pytest.raises(SessionStorageFailure) as raised:
        auth.restore_session()
    assert raised.value.reason is StorageFailureReason.ENTRY_NOT_CLEARED
    assert "could not be cleared" in str(raised.value) and "garbage" not in str(raised.value)
    assert store.value == "garbage" and cleared_warnings(caplog, open_env) == []
    store.failing.clear()
    assert auth.restore_session() is None and store.value is None
    assert len(cleared_warnings(caplog, open_env)) == 1


def test_invalidate_deletes_an_undecodable_value(make_client, emu: Emulator, open_env: str) -> None:
    store = DictStore()
    session = signed_in(make_client(open_env, storage=store), emu, open_env, "undecodable@example.com").session
    store.value = "garbage"
    store.failing.add("delete")
    with pytest.raises(SessionStorageFailure) as raised:
        session.invalidate()
    assert raised.value.reason is StorageFailureReason.ENTRY_NOT_CLEARED and store.value == "garbage"
    store.failing.clear()
    session.invalidate()
    assert store.value is None


def invalidate_from_threads(sessions: list[PortalSession], threads: int = 8) -> list[BaseException | None]:
    """Invalidates from `threads` threads at once, round robin over `sessions`; each outcome."""
    outcomes: list[BaseException | None] = [None] * threads
    start = threading.Barrier(threads)

    def run(index: int) -> None:
        start.wait()
        try:
            sessions[index % len(sessions)].invalidate()
        except BaseException as error:  # noqa: BLE001
            outcomes[index] = error

    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    return outcomes


def sessions_of_one_token(make_client, emu: Emulator, env: str, **options: object) -> list[PortalSession]:
    """One token, three session objects: a sign-in, and a restore by that client and by another."""
    auth = make_client(env, **options)
    first = signed_in(auth, emu, env, "shared@example.com").session
    restored = auth.restore_session()
    elsewhere = make_client(env, **options).restore_session()
    assert restored is not None and elsewhere is not None
    assert restored is not first and elsewhere is not restored
    return [first, restored, elsewhere]


def test_eight_threads_invalidating_one_token_make_one_compare_and_delete(make_client, emu: Emulator, open_env: str) -> None:
    store = DictStore()
    sessions = sessions_of_one_token(make_client, emu, open_env, storage=store)
    store.calls.clear()
    assert invalidate_from_threads(sessions) == [None] * 8
    assert store.calls == ["get", "delete"] and store.value is None
    for session in sessions:
        with pytest.raises(SessionInvalidated):
            session.get_token()
    sessions[2].invalidate()  # settled: no storage I/O
    assert store.calls == ["get", "delete"]


def test_invalidating_one_session_invalidates_every_one_of_its_token(make_client, emu: Emulator, open_env: str) -> None:
    first, restored, elsewhere = sessions_of_one_token(make_client, emu, open_env, storage="memory")
    elsewhere.invalidate()
    for session in (first, restored):
        with pytest.raises(SessionInvalidated):
            session.get_token()


def test_after_a_failed_invalidation_the_next_one_retries(make_client, emu: Emulator, open_env: str) -> None:
    store = DictStore()
    session = signed_in(make_client(open_env, storage=store), emu, open_env, "retry@example.com").session
    store.calls.clear()
    store.failing.add("get")
    with pytest.raises(SessionStorageFailure) as raised:
        session.invalidate()
    assert raised.value.reason is StorageFailureReason.HOST_STORAGE_FAILED
    store.failing.clear()
    session.invalidate()
    assert store.calls == ["get", "get", "delete"] and store.value is None


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
        with pytest.raises(SessionStorageFailure, match="locked") as raised:
            auth.restore_session()
        assert raised.value.reason is StorageFailureReason.KEYRING_LOCKED
        with pytest.raises(SessionStorageFailure, match="locked") as raised:
            result.session.invalidate()
        assert raised.value.reason is StorageFailureReason.KEYRING_LOCKED
    finally:
        subprocess.run([keyring, "start"], check=True)  # a restarted daemon opens it unlocked
    assert json.loads(keyring_entry(open_env) or b"null")["endUserId"] == result.session.end_user_id
    # The session was invalidated here: a restore finishes the delete that failed.
    assert make_client(open_env).restore_session() is None and keyring_entry(open_env) is None


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
    assert raised.value.reason is StorageFailureReason.NO_SECRET_SERVICE


def test_without_a_session_bus_the_reason_says_so(emu: Emulator, open_env: str) -> None:
    program = (
        "import sys\n"
        "from portal_auth import PortalAuth, SessionStorageFailure\n"
        "with PortalAuth(auth_environment_id=sys.argv[1], redirect_url=sys.argv[2], api_host=sys.argv[3]) as auth:\n"
        "    try:\n"
        "        auth.restore_session()\n"
        "    except SessionStorageFailure as error:\n"
        "        print(error.reason.name)\n"
    )
    environment = {name: value for name, value in os.environ.items() if name != "DBUS_SESSION_BUS_ADDRESS"}
    environment["XDG_RUNTIME_DIR"] = "/nonexistent"  # nor GLib's fallback, $XDG_RUNTIME_DIR/bus
    ran = subprocess.run([sys.executable, "-c", program, open_env, CALLBACK, emu.url],
                         capture_output=True, text=True, timeout=60, env=environment)
    assert ran.stdout == "NO_SESSION_BUS\n", ran.stderr


def test_the_keyring_clears_an_undecodable_entry_with_one_warning(
    make_client, emu: Emulator, open_env: str, keyring: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="portal_auth")
    store_in_keyring(open_env, b"{not a session")
    assert make_client(open_env).restore_session() is None
    assert keyring_entry(open_env) is None
    assert cleared_warnings(caplog, open_env) == [f"An undecodable stored session of environment {open_env} was cleared."]
    # invalidate() clears one too.
    session = signed_in(make_client(open_env), emu, open_env, "corrupt@example.com").session
    store_in_keyring(open_env, b"\xff\xfe")
    session.invalidate()
    assert keyring_entry(open_env) is None


def test_a_keyring_that_refuses_the_self_heal_fails_and_keeps_the_entry(emu: Emulator, open_env: str, keyring: str) -> None:
    """In a keyring of its own whose bus refuses every item's Delete: the read works, the
    delete of the undecodable entry does not."""
    program = (
        "import logging, subprocess, sys\n"
        "from portal_auth import PortalAuth, SessionStorageFailure\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s', stream=sys.stdout)\n"
        "subprocess.run(['secret-tool', 'store', '--label=x', 'xdg:schema', 'io.portalhq.auth.Session',\n"
        "                'auth_environment_id', sys.argv[1]], input=b'{not a session', check=True)\n"
        "with PortalAuth(auth_environment_id=sys.argv[1], redirect_url=sys.argv[2], api_host=sys.argv[3]) as auth:\n"
        "    try:\n"
        "        auth.restore_session()\n"
        "    except SessionStorageFailure as error:\n"
        "        print(error.reason.name)\n"
        "print(subprocess.run(['secret-tool', 'lookup', 'auth_environment_id', sys.argv[1]],\n"
        "                     capture_output=True, text=True).stdout)\n"
    )
    ran = subprocess.run(
        [keyring, "run", "--deny-item-delete", sys.executable, "-c", program, open_env, CALLBACK, emu.url],
        capture_output=True, text=True, timeout=120,
    )
    assert ran.stdout == "ENTRY_NOT_CLEARED\n{not a session\n", ran.stderr


def test_a_one_call_sign_in_asks_the_keyring_once(emu: Emulator, secret_service_calls: SecretServiceCalls) -> None:
    """The browser and magic-link sign-ins ask the store whether it can take a session once,
    before the port is taken (docs/desktop.md "Keyring", its nothing-is-spent rule): they
    cost the keyring what a handleRedirect does, three calls at most."""
    environment_id, redirect = loopback_environment(emu)
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                    magic_link=MagicLinkConfig(from_email=FROM_EMAIL, template_id=TEMPLATE_ID)) as auth:
        def redirect_sign_in() -> object:
            return auth.handle_redirect(emu.grant_redirect(environment_id, "once@example.com").replace(CALLBACK, redirect, 1))

        redirect_sign_in()  # the connection, the collection's path and the app's item made
        browser = Browser()
        auth.set_browser_opener(browser)
        sign_ins = {
            "handle_redirect": redirect_sign_in,
            "browser": lambda: auth.sign_in_with_google(timeout=60),
            "magic link": lambda: magic_link_sign_in(auth, emu, "once-by-link@example.com"),
        }
        baseline: dict[str, int] | None = None
        for name, sign_in in sign_ins.items():
            secret_service_calls.counted()
            assert isinstance(sign_in(), AuthenticatedResult), name
            calls = secret_service_calls.counted()
            assert sum(calls.values()) <= 3 and calls.get("org.freedesktop.Secret.Collection.CreateItem") == 1, (name, calls)
            baseline = baseline or calls
            assert calls == baseline, name
        browser.wait()


def magic_link_sign_in(auth: PortalAuth, emu: Emulator, email: str) -> object:
    """A magic-link sign-in whose email's redirect is loaded as a browser would, once sent."""
    query = urllib.parse.urlencode({"email": email, "count": 1, "timeout": 30})
    browser = Browser()
    opener = threading.Thread(target=lambda: browser(emu.call("GET", "outbox?" + query)["messages"][-1]["link"], False))
    opener.start()
    result = auth.sign_in_with_magic_link(email, timeout=60)
    opener.join(60)
    browser.wait()
    return result


def test_eight_threads_invalidating_on_the_keyring_make_one_read_and_one_delete(
    make_client, emu: Emulator, open_env: str, secret_service_calls: SecretServiceCalls
) -> None:
    sessions = sessions_of_one_token(make_client, emu, open_env)
    secret_service_calls.counted()
    assert invalidate_from_threads(sessions) == [None] * 8
    calls = secret_service_calls.counted()
    # A read is one search (with its secrets); a delete searches twice (the application's
    # item, and one stored before the application attribute existed) and deletes the item.
    assert calls.get("org.freedesktop.Secret.Service.SearchItems") == 3, calls
    assert calls.get("org.freedesktop.Secret.Service.GetSecrets") == 1, calls
    assert calls.get("org.freedesktop.Secret.Item.Delete") == 1, calls
    for session in sessions:
        with pytest.raises(SessionInvalidated):
            session.get_token()
    sessions[0].invalidate()
    assert secret_service_calls.counted() == {}, "settled: no keyring I/O"
    assert keyring_entry(open_env) is None  # secret-tool's own calls come after the count


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
