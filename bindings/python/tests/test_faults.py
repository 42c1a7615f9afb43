"""Fault injection: the emulator answers 5xx, resets the connection, never answers (a
timeout), sends a truncated or a 10 MB body, or answers slowly; the keyring disappears.
Each fault ends in a clear error that carries no secret; the session already persisted is
never lost; every call, concurrent ones included, completes exactly once (an awaited call
whose completion went missing would never return; the C suite Tests/c/faults_test.c counts
the callbacks themselves)."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest
from conftest import CALLBACK, Emulator

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, PortalAuth

GRANT_PATH = "/magic-links/validations"

# fault kind and fields -> the error it must end in (a RequestError's status: None when no
# usable response arrived).
FAULTS: dict[str, tuple[dict[str, Any], int | None]] = {
    "500": ({"kind": "status", "status": 500}, 500),
    "503": ({"kind": "status", "status": 503, "body": "<html>busy</html>"}, 503),
    "reset": ({"kind": "drop"}, None),
    "timeout": ({"kind": "hold"}, None),
    "truncated": ({"kind": "truncated", "body": '{"data":{"clientSessionToken":"'}, None),
    "10 MB body": ({"kind": "oversized"}, None),
}


def request_timeout(fault: dict[str, Any]) -> float | None:
    """A held request ends at a short timeout; every other call keeps the default, so that a
    busy machine cannot turn a slow answer into a timeout."""
    return 1 if fault["kind"] == "hold" else None


def client(emu: Emulator, env: str, timeout: float | None = None) -> PortalAuth:
    return PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, request_timeout=timeout)


def signed_in(emu: Emulator, env: str, email: str) -> tuple[str, str]:
    """Signs `email` in through a client of its own; the persisted (end_user_id, token)."""
    with client(emu, env) as auth:
        result = auth.handle_redirect(emu.grant_redirect(env, email))
        assert isinstance(result, AuthenticatedResult)
        return result.session.end_user_id, result.session.get_token()


def persisted(emu: Emulator, env: str) -> tuple[str, str] | None:
    """What a new client (a new process would do the same) restores from the keyring."""
    with client(emu, env) as auth:
        session = auth.restore_session()
        return None if session is None else (session.end_user_id, session.get_token())


@pytest.fixture
def open_env(emu: Emulator) -> str:
    return emu.environment(totp=False)


@pytest.mark.parametrize("name", FAULTS)
def test_a_failing_grant_exchange_is_a_clear_error_and_keeps_the_session(
    emu: Emulator, open_env: str, keyring: str, name: str
) -> None:
    fault, status = FAULTS[name]
    before = signed_in(emu, open_env, "first@example.com")
    redirect = emu.grant_redirect(open_env, "second@example.com")
    emu.fault(GRANT_PATH, **fault)
    with client(emu, open_env, request_timeout(fault)) as auth:
        with pytest.raises(portal_auth.RequestError) as raised:
            auth.handle_redirect(redirect)
    emu.call("POST", "release")
    assert raised.value.status == status
    message = str(raised.value)
    assert message and redirect.split("token=")[1].split("&")[0] not in message
    assert persisted(emu, open_env) == before


@pytest.mark.parametrize("name", FAULTS)
def test_concurrent_calls_under_a_fault_each_end_once_with_the_error(emu: Emulator, env: str, name: str) -> None:
    fault, status = FAULTS[name]
    emu.fault("/methods", count=0, **fault)  # every request, until cleared

    async def run() -> list[BaseException | Any]:
        async with AsyncPortalAuth(
            auth_environment_id=env,
            redirect_url=CALLBACK,
            api_host=emu.url,
            storage="memory",
            request_timeout=request_timeout(fault),
        ) as auth:
            return await asyncio.gather(*(auth.get_methods() for _ in range(20)), return_exceptions=True)

    outcomes = asyncio.run(run())
    emu.call("DELETE", "faults")  # also releases the held requests
    assert len(outcomes) == 20
    for outcome in outcomes:
        assert isinstance(outcome, portal_auth.RequestError) and outcome.status == status, outcome


def test_a_slow_response_within_the_timeout_succeeds_and_persists(emu: Emulator, open_env: str, keyring: str) -> None:
    emu.fault(GRANT_PATH, "latency", ms=300)
    after = signed_in(emu, open_env, "slow@example.com")
    assert persisted(emu, open_env) == after
    assert len(emu.requests(GRANT_PATH)) == 1


def test_a_keyring_that_disappears_loses_no_session(emu: Emulator, open_env: str, keyring: str) -> None:
    before = signed_in(emu, open_env, "kept@example.com")
    redirect = emu.grant_redirect(open_env, "during@example.com")
    emu.call("DELETE", "requests")
    subprocess.run([keyring, "stop"], check=True)
    stopped = True
    try:
        with client(emu, open_env) as auth:
            # The exchange succeeds (the backend burns the grant) but the write fails.
            with pytest.raises(portal_auth.SessionStorageFailure) as raised:
                auth.handle_redirect(redirect)
            assert "Secret Service" in str(raised.value)
            with pytest.raises(portal_auth.SessionStorageFailure):
                auth.restore_session()
            subprocess.run([keyring, "start"], check=True)
            stopped = False
            # The entry was left alone while the keyring was away ...
            assert persisted(emu, open_env) == before
            # ... and the same redirect again finishes only the write: no second request.
            result = auth.handle_redirect(redirect)
            assert isinstance(result, AuthenticatedResult)
            after = (result.session.end_user_id, result.session.get_token())
    finally:
        if stopped:
            subprocess.run([keyring, "start"], check=True)
    assert len(emu.requests(GRANT_PATH)) == 1
    assert after != before and persisted(emu, open_env) == after
