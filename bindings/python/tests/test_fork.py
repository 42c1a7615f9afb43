"""fork() (docs/desktop.md "fork()") from Python, with multiprocessing's "fork" start method
(Linux's default up to Python 3.13): the parent has signed in with the keyring, and has a
call on the wire (held by the emulator), its thread waiting for it, when it forks.
The child uses the client it inherited and one of its own: each restores the session from
the keyring, and makes a call, all within a bound; nothing of the parent's runs there. The
parent's held call then completes, once."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest
from conftest import Emulator

import portal_auth
from portal_auth import AuthenticatedResult, PortalAuth

APPLICATION = "io.portalhq.auth.PythonForkTest"


def in_child(inherited: PortalAuth, emulator_url: str, environment_id: str, results: Any) -> None:
    """Runs in the forked child: puts what it found into `results`, or the error's repr."""
    try:
        restored = inherited.restore_session()
        with PortalAuth(auth_environment_id=environment_id, redirect_url="myapp://auth/callback",
                        api_host=emulator_url, application_id=APPLICATION) as own:
            again = own.restore_session()
            methods = own.get_methods()
        results.put((
            restored.end_user_id if restored else None,
            again.end_user_id if again else None,
            [method.value for method in methods.allowed_auth_methods],
            inherited.get_methods().auto_create_wallet,
        ))
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which fails the test
        results.put(repr(error))


def test_a_forked_child_has_a_library_of_its_own(emu: Emulator, keyring: str) -> None:
    env = emu.environment(totp=False)
    with PortalAuth(auth_environment_id=env, redirect_url="myapp://auth/callback", api_host=emu.url,
                    application_id=APPLICATION) as client:
        signed_in = client.handle_redirect(emu.grant_redirect(env, "py-fork@example.com"))
        assert isinstance(signed_in, AuthenticatedResult)
        end_user_id = signed_in.session.end_user_id

        # A call on the wire, held by the emulator, on a thread of its own, and this thread's
        # blocking wait for another.
        emu.fault("/oauth/urls", "hold")
        held: list[Any] = []
        holder = threading.Thread(target=lambda: held.append(client.login_with_google()))
        holder.start()
        emu.wait("/oauth/urls", 1)

        context = multiprocessing.get_context("fork")
        results = context.SimpleQueue()
        child = context.Process(target=in_child, args=(client, emu.url, env, results))
        child.start()
        child.join(120)
        assert child.exitcode == 0
        found = results.get()
        assert found == (end_user_id, end_user_id, ["EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"], True), found

        # The parent: its held call completes once released, and its client goes on.
        emu.call("POST", "release", {})
        holder.join(60)
        assert len(held) == 1 and held[0].authorize_url.startswith("http")
        restored = client.restore_session()
        assert restored is not None and restored.end_user_id == end_user_id
        assert len(emu.requests("/oauth/urls")) == 1
        client.clear_persisted_session()


def test_a_session_of_the_parent_is_the_parents(emu: Emulator) -> None:
    """In the child, the parent's session object answers nothing: the library refuses handles
    made before the fork (a new client restores the child's own)."""
    env = emu.environment(totp=False)
    with PortalAuth(auth_environment_id=env, redirect_url="myapp://auth/callback", api_host=emu.url,
                    storage="memory") as client:
        result = client.handle_redirect(emu.grant_redirect(env, "py-fork-session@example.com"))
        assert isinstance(result, AuthenticatedResult)
        context = multiprocessing.get_context("fork")
        results = context.SimpleQueue()

        def child() -> None:
            try:
                result.session.get_token()
                results.put("answered")
            except portal_auth.PortalAuthError as error:
                results.put(type(error).__name__)

        process = context.Process(target=child)
        process.start()
        process.join(60)
        assert process.exitcode == 0 and results.get() == "InvalidArgument"
        assert result.session.get_token()  # the parent's still answers
