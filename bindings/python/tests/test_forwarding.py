"""Custom-scheme redirects that reach the running instance, from Python: listen_for_redirects
(an iterator on PortalAuth, an async iterator on AsyncPortalAuth) and forward_redirect, over
the channel in a runtime folder of the test's own ($XDG_RUNTIME_DIR): taken, replayed,
refused for another redirect, no instance, one listener at a time, a forwarded error, and the
runtime folder's checks."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CALLBACK, Emulator

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, PortalAuth, RedirectForwarding

APPLICATION = "com.example.PortalAuthPythonTest"


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime folder of this test's own, the user's alone (mode 0700), as a session's."""
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def make(emu: Emulator, env: str) -> Iterator[Any]:
    """Clients of one environment and application, as the running app and its URL handler."""
    made: list[PortalAuth] = []

    def client(**options: Any) -> PortalAuth:
        options.setdefault("application_id", APPLICATION)
        auth = PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage="memory", **options)
        made.append(auth)
        return auth

    yield client
    for auth in made:
        auth.close()


@pytest.fixture
def totp_free(emu: Emulator) -> str:
    return emu.environment(totp=False)


def test_taken_replayed_refused_and_no_instance(emu: Emulator, totp_free: str) -> None:
    def client() -> PortalAuth:
        return PortalAuth(auth_environment_id=totp_free, redirect_url=CALLBACK, api_host=emu.url, storage="memory",
                          application_id=APPLICATION)

    url = emu.grant_redirect(totp_free, "py-forward@example.com")
    with client() as handler:
        assert handler.forward_redirect(url) is RedirectForwarding.NO_INSTANCE
        with client() as app, app.listen_for_redirects() as listener:
            assert handler.forward_redirect(url) is RedirectForwarding.TAKEN
            first = next(listener)
            assert isinstance(first, AuthenticatedResult) and first.session.get_token()
            # Forwarded again: the running instance replays it, with no second exchange.
            assert handler.forward_redirect(url) is RedirectForwarding.TAKEN
            again = next(listener)
            assert isinstance(again, AuthenticatedResult) and again.session is first.session
            assert len(emu.requests("/magic-links/validations")) == 1
            # Not this client's redirect: refused, and nothing reaches the listener.
            other = url.replace(CALLBACK, "otherapp://auth/callback")
            assert handler.forward_redirect(other) is RedirectForwarding.REFUSED
            # A URL that targets the redirect but is no sign-in: taken, and it comes to None.
            assert handler.forward_redirect(CALLBACK + "?nothing=here") is RedirectForwarding.TAKEN
            assert next(listener) is None
            # An error redirect is an outcome of its own; listening goes on.
            assert handler.forward_redirect(CALLBACK + "?error=access_denied") is RedirectForwarding.TAKEN
            failed = next(listener)
            assert isinstance(failed, portal_auth.AuthenticationFailed) and failed.error == "access_denied"
            listener.close()
            assert list(listener) == []  # the iteration has ended
        # The app is gone: nobody listens any more.
        assert handler.forward_redirect(url) is RedirectForwarding.NO_INSTANCE


def test_another_application_is_another_channel(make: Any, emu: Emulator, env: str) -> None:
    app = make()
    listener = app.listen_for_redirects()
    url = emu.grant_redirect(env, "py-other-app@example.com")
    assert make(application_id="com.example.Another").forward_redirect(url) is RedirectForwarding.NO_INSTANCE
    listener.close()
    assert list(listener) == []


def test_one_listener_at_a_time(make: Any) -> None:
    with make().listen_for_redirects():
        second = make().listen_for_redirects()
        with pytest.raises(portal_auth.SignInUnavailable) as raised:
            next(second)
        assert raised.value.reason is portal_auth.SignInUnavailableReason.CHANNEL_IN_USE
        assert list(second) == []  # raised once, then ended


def test_closing_the_client_ends_listening(make: Any) -> None:
    app = make()
    listener = app.listen_for_redirects()
    app.close()
    assert list(listener) == []


def test_asyncio_listener_completes_the_sign_in(emu: Emulator, env: str) -> None:
    url = emu.grant_redirect(env, "py-forward-async@example.com")

    async def main() -> None:
        async with AsyncPortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url,
                                   storage="memory", application_id=APPLICATION) as app:
            listener = app.listen_for_redirects()
            async with AsyncPortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url,
                                       application_id=APPLICATION) as handler:
                assert await handler.forward_redirect(url) is RedirectForwarding.TAKEN
            outcomes = []
            async for outcome in listener:
                outcomes.append(outcome)
                await listener.close()
            assert len(outcomes) == 1
            step = outcomes[0]
            assert isinstance(step, portal_auth.TotpRequiredResult)  # the environment asks for TOTP
            result = await app.verify_totp(emu.totp_code(env, "py-forward-async@example.com"), step.user_jwt)
            assert result.session.end_user_id == step.end_user_id

    asyncio.run(main())


def test_the_runtime_folder_must_be_the_users_alone(make: Any, runtime: Path, emu: Emulator, env: str) -> None:
    url = emu.grant_redirect(env, "py-unsafe@example.com")
    os.chmod(runtime, 0o755)
    with pytest.raises(portal_auth.SignInUnavailable) as unsafe:
        make().forward_redirect(url)
    assert unsafe.value.reason is portal_auth.SignInUnavailableReason.RUNTIME_DIRECTORY_UNSAFE
    listener = make().listen_for_redirects()
    with pytest.raises(portal_auth.SignInUnavailable) as unsafe_listen:
        next(listener)
    assert unsafe_listen.value.reason is portal_auth.SignInUnavailableReason.RUNTIME_DIRECTORY_UNSAFE
    os.rmdir(runtime)
    with pytest.raises(portal_auth.SignInUnavailable) as missing:
        make().forward_redirect(url)
    assert missing.value.reason is portal_auth.SignInUnavailableReason.NO_RUNTIME_DIRECTORY


def test_a_closed_client_forwards_nothing(make: Any, emu: Emulator, env: str) -> None:
    handler = make()
    handler.close()
    with pytest.raises(portal_auth.PortalAuthError):
        handler.forward_redirect(emu.grant_redirect(env, "py-closed-forward@example.com"))
