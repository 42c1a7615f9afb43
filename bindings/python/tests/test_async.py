"""AsyncPortalAuth: the same calls as coroutines, completions delivered to the loop's thread,
500 calls at once, and cancellation on the terms of docs/protocol.md §5."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Awaitable
from typing import Any

import pytest
from conftest import CALLBACK, FROM_EMAIL, TEMPLATE_ID, Emulator

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, MagicLinkConfig, TotpRequiredResult, _calls


def client(emu: Emulator, env: str, **options: Any) -> AsyncPortalAuth:
    options.setdefault("magic_link", MagicLinkConfig(from_email=FROM_EMAIL, template_id=TEMPLATE_ID))
    return AsyncPortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, **options)


def test_every_call(emu: Emulator, env: str) -> None:
    async def main() -> None:
        async with client(emu, env) as auth:
            methods = await auth.get_methods()
            assert portal_auth.AuthMethod.GOOGLE in methods.allowed_auth_methods
            assert "/oauth/google/" in (await auth.login_with_google()).authorize_url
            assert "/oauth/apple/" in (await auth.login_with_apple()).authorize_url
            await auth.send_magic_link("async@example.com")
            step = await auth.handle_redirect(emu.outbox_link("async@example.com"))
            assert isinstance(step, TotpRequiredResult)
            signed_in = await auth.verify_totp(emu.totp_code(env, "async@example.com"), step.user_jwt)
            restored = await auth.restore_session()
            assert restored is not None and restored.get_token() == signed_in.session.get_token()
            assert await auth.handle_redirect("otherapp://x") is None
            await auth.clear_persisted_session()
            assert await auth.restore_session() is None
            await signed_in.session.invalidate_async()
            with pytest.raises(portal_auth.SessionInvalidated):
                signed_in.session.get_token()
            with pytest.raises(portal_auth.AuthenticationFailed):
                await auth.handle_redirect(CALLBACK + "?error=denied")
        with pytest.raises(portal_auth.PortalAuthError, match="closed"):
            await auth.get_methods()

    asyncio.run(main())


def test_completions_run_on_the_loop_thread(emu: Emulator, env: str) -> None:
    async def main() -> None:
        loop_thread = threading.get_ident()
        async with client(emu, env, storage="memory") as auth:
            await auth.get_methods()
            assert threading.get_ident() == loop_thread
            done = asyncio.get_running_loop().create_future()
            task = asyncio.ensure_future(auth.get_methods())
            task.add_done_callback(lambda _: done.set_result(threading.get_ident()))
            await task
            assert await done == loop_thread

    asyncio.run(main())


def test_a_finished_call_leaves_no_reference_cycle(emu: Emulator) -> None:
    """Each call's objects go when its result does, not at the garbage collector's next run
    (a cycle per call made the collector run often and the latency's tail long)."""
    env = emu.environment(totp=False)

    async def main() -> int:
        async with client(emu, env, storage="memory") as auth:
            await auth.get_methods()
            gc.collect()
            gc.disable()
            try:
                for _ in range(20):
                    await auth.get_methods()
                await auth.handle_redirect(emu.grant_redirect(env, "cycles@example.com"))
                return gc.collect()
            finally:
                gc.enable()

    assert asyncio.run(main()) == 0


def test_500_concurrent_calls_on_one_client(emu: Emulator) -> None:
    env = emu.environment(totp=False)
    urls = [emu.grant_redirect(env, f"many{index}@example.com") for index in range(100)]

    async def main() -> None:
        async with client(emu, env, storage="memory") as auth:
            calls: list[Awaitable[object]] = [auth.get_methods() for _ in range(400)]
            calls += [auth.handle_redirect(url) for url in urls]
            results = await asyncio.gather(*calls)
        methods, signed_in = results[:400], results[400:]
        assert all(isinstance(result, portal_auth.AuthMethodsResult) for result in methods)
        assert all(isinstance(result, AuthenticatedResult) for result in signed_in)
        assert len({result.session.end_user_id for result in signed_in}) == 100  # type: ignore[union-attr]

    asyncio.run(main())
    assert len(emu.requests("/methods")) == 400


def test_a_closed_loop_does_not_break_a_late_completion(emu: Emulator, env: str) -> None:
    """A call whose loop is closed when it completes is dropped quietly; others are unharmed.
    The call is an exchange on the wire, which cancelling its task does not stop: it ends
    only once the emulator answers, after its loop is closed."""
    url = emu.grant_redirect(env, "late@example.com")
    emu.fault("/magic-links/validations", "hold")
    auth = client(emu, env, storage="memory")
    loop = asyncio.new_event_loop()

    async def abandon() -> None:
        task = asyncio.ensure_future(auth.handle_redirect(url))
        await asyncio.to_thread(emu.wait, "/magic-links/validations", 1)
        task.cancel()

    loop.run_until_complete(abandon())
    loop.close()
    [late] = [call for call in _calls._registry.values() if call.start.persists]
    assert not late.finished
    emu.call("POST", "release")
    # This thread runs the queue now, outside any loop: the late call's wake finds its loop
    # closed, and the run must not raise for it.
    waiter = _calls._waiter()
    deadline = time.monotonic() + 30
    while not late.finished and time.monotonic() < deadline:
        waiter.wait(deadline - time.monotonic())
        _calls.run()
    assert late.finished and late.error is None

    async def later() -> None:
        assert (await auth.get_methods()).allowed_auth_methods

    asyncio.run(later())
    auth.close()


def test_cancelled_after_the_request_is_sent_still_persists_the_session(emu: Emulator) -> None:
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "sent@example.com")
    emu.fault("/magic-links/validations", "hold")

    async def main() -> None:
        async with client(emu, env) as auth:
            task = asyncio.ensure_future(auth.handle_redirect(url))
            await asyncio.to_thread(emu.wait, "/magic-links/validations", 1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task  # at once: the held exchange has not answered yet
            emu.call("POST", "release")
            # The exchange goes on in the library. Replaying its redirect waits for it (the
            # grant lock), then answers from its memory: the session it persisted.
            replayed = await auth.handle_redirect(url)
            assert isinstance(replayed, AuthenticatedResult)
            restored = await auth.restore_session()
            assert restored is not None and restored.get_token() == replayed.session.get_token()
            assert len(emu.requests("/magic-links/validations")) == 1

    asyncio.run(main())


def test_cancelled_before_the_request_is_sent_sends_nothing(emu: Emulator) -> None:
    """The engine allows 16 connections per origin: with 16 requests held at the emulator, a
    17th waits in the library, unsent, where a cancellation takes."""
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "unsent@example.com")
    emu.fault("/methods", "hold", count=0)

    async def main() -> None:
        async with client(emu, env) as auth:
            held = [asyncio.ensure_future(auth.get_methods()) for _ in range(16)]
            await asyncio.to_thread(emu.wait, "/methods", 16)
            exchange = asyncio.ensure_future(auth.handle_redirect(url))
            await asyncio.sleep(0)  # one turn of the loop: the task starts its call and awaits it
            # Started in the library (its first step taken as it started), not cancelled
            # before it began: the cancel below is taken while it waits for a connection.
            assert [call.start.persists for call in _calls._registry.values()].count(True) == 1
            exchange.cancel()
            with pytest.raises(asyncio.CancelledError):
                await exchange
            emu.call("DELETE", "faults")  # releases the held requests
            await asyncio.gather(*held)
            assert emu.requests("/magic-links/validations") == []
            # The grant was never spent: it still signs the user in.
            result = await auth.handle_redirect(url)
            assert isinstance(result, AuthenticatedResult)

    asyncio.run(main())
