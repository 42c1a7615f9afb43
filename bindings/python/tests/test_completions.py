"""Completions on Python's own threads, through the library's completion queue: a call of
either client completes on a thread that waits (a blocking caller, the asyncio loop), never
on a library thread; log lines too; a waiting thread also completes other threads' calls and
wakes them; Ctrl-C in a blocking call cancels it and leaves the queue working."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import CALLBACK, Emulator

from portal_auth import AsyncPortalAuth, AuthenticatedResult, AuthMethodsResult, PortalAuth, _awaited, _calls, _native


def _thread_of_completion(auth: Any) -> _calls.Start[int]:
    """get_methods, whose completion reads the ident of the thread it runs on."""
    return auth._call(_calls.Callback(_native.METHODS_FN, lambda methods, error: threading.get_ident()), "portal_auth_get_methods")


def _client(emu: Emulator, kind: type[Any]) -> Any:
    return kind(auth_environment_id=emu.environment(totp=False), redirect_url=CALLBACK, api_host=emu.url, storage="memory")


def test_a_blocking_call_completes_on_its_own_thread(emu: Emulator) -> None:
    with _client(emu, PortalAuth) as auth:
        assert _calls.blocking(_thread_of_completion(auth)) == threading.get_ident()


def test_a_session_s_invalidation_completes_on_the_waiting_thread_too(emu: Emulator) -> None:
    """A session belongs to no client: it invalidates through the queue because the
    completion that lent it ran from there."""
    env = emu.environment(totp=False)
    with PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage="memory") as auth:
        result = auth.handle_redirect(emu.grant_redirect(env, "invalidated-here@example.com"))
    assert isinstance(result, AuthenticatedResult)
    where = _calls.Callback(_native.DONE_FN, lambda error: threading.get_ident())
    assert _calls.blocking(_calls.Start(where, result.session._start_invalidate)) == threading.get_ident()


def test_threads_waiting_at_once_complete_each_other_s_calls_and_wake_each_other(emu: Emulator) -> None:
    with _client(emu, PortalAuth) as auth:
        threads: dict[int, list[int]] = {}

        def work() -> None:
            seen = threads.setdefault(threading.get_ident(), [])
            for _ in range(50):
                seen.append(_calls.blocking(_thread_of_completion(auth)))

        workers = [threading.Thread(target=work) for _ in range(6)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=120)
        assert not any(worker.is_alive() for worker in workers)
        ran_on = {ident for seen in threads.values() for ident in seen}
        assert sum(len(seen) for seen in threads.values()) == 300
        assert ran_on <= set(threads)  # only the waiting threads ran completions


def test_awaited_calls_complete_on_the_loop_thread(emu: Emulator) -> None:
    async def main() -> set[int]:
        async with _client(emu, AsyncPortalAuth) as auth:
            calls = [_awaited.awaiting(_thread_of_completion(auth)) for _ in range(1000)]
            return set(await asyncio.gather(*calls))

    assert asyncio.run(main()) == {threading.get_ident()}


def test_blocking_and_awaited_calls_at_once(emu: Emulator) -> None:
    """The loop's reader, blocking threads, and a blocking call made inside a task (which
    runs the queue with the loop's tasks waiting on it) complete each other's calls."""
    blocking_auth = _client(emu, PortalAuth)
    results: list[object] = []

    def work() -> None:
        for _ in range(40):
            results.append(blocking_auth.get_methods())

    async def main() -> list[object]:
        async with _client(emu, AsyncPortalAuth) as auth:
            workers = [threading.Thread(target=work) for _ in range(3)]
            for worker in workers:
                worker.start()
            awaited = asyncio.gather(*(auth.get_methods() for _ in range(200)))
            inside_a_task = blocking_auth.get_methods()  # blocks the loop, runs the queue
            done = await awaited
            await asyncio.to_thread(lambda: [worker.join(timeout=120) for worker in workers])
            return [inside_a_task, *done]

    awaited = asyncio.run(main())
    blocking_auth.close()
    assert len(awaited) == 201 and len(results) == 120
    assert all(isinstance(result, AuthMethodsResult) for result in awaited + results)


def test_log_lines_reach_the_logger_on_the_waiting_thread(
    make_client, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="portal_auth")
    env = emu.environment(totp=False)
    auth = make_client(env)
    url = emu.grant_redirect(env, "logged-here@example.com")
    auth.handle_redirect(url)
    auth.handle_redirect(url)  # a replay, logged at debug level
    records = [record for record in caplog.records if record.name == "portal_auth"]
    assert len(records) >= 3
    assert {record.thread for record in records} == {threading.get_ident()}

    async def main() -> None:
        async with AsyncPortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url) as async_auth:
            await async_auth.handle_redirect(emu.grant_redirect(env, "logged-loop@example.com"))

    caplog.clear()
    asyncio.run(main())
    records = [record for record in caplog.records if record.name == "portal_auth"]
    assert records and {record.thread for record in records} == {threading.get_ident()}


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as in a program started from a terminal, even where
    this test run inherited SIGINT ignored (a background job of a shell)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c")
def test_ctrl_c_in_a_blocking_call_cancels_it_and_the_queue_still_works(emu: Emulator) -> None:
    emu.fault("/methods", "hold")
    earlier = set(_calls._registry)  # calls of earlier tests that nobody waits for
    with _client(emu, PortalAuth) as auth:
        main = threading.get_ident()

        def interrupt() -> None:
            emu.wait("/methods", 1)  # the call is waiting for its answer
            signal.pthread_kill(main, signal.SIGINT)

        interrupter = threading.Thread(target=interrupt)
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            auth.get_methods()
        interrupter.join()
        emu.call("POST", "release")
        # The interrupted call (already sent, so not cancelled) completes through the queue
        # that the next calls run; nothing is left behind.
        for _ in range(100):
            assert isinstance(auth.get_methods(), AuthMethodsResult)
            if set(_calls._registry) <= earlier:
                break
        assert set(_calls._registry) <= earlier


def test_a_run_wakes_every_waiter_before_it_raises_what_one_wake_raised(emu: Emulator) -> None:
    """A wake that raises (a task it resumed was interrupted) does not keep the run from
    waking the calls completed after it: the run raises it once every waiter is woken."""
    woken: list[str] = []

    def interrupted() -> None:
        woken.append("first")
        raise KeyboardInterrupt

    auth = _client(emu, PortalAuth)
    try:
        # Two calls that send nothing: both completions are queued, in order, for one run.
        first, second = (_calls._Call(auth._handle_redirect("otherapp://x")) for _ in range(2))
        first.wake, second.wake = interrupted, lambda: woken.append("second")
        _calls.begin(first)
        _calls.begin(second)
        with pytest.raises(KeyboardInterrupt):
            _calls.run()
    finally:
        auth.close()
    assert woken == ["first", "second"]
    assert first.finished and second.finished


def test_an_interruption_in_the_run_that_starts_an_awaited_call_cancels_it(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An awaiting task runs the queue as it starts its call; a Ctrl-C raised in that run (here
    by another call's completion, already queued) ends the task with it and cancels the call,
    as it does a blocking call's."""
    from portal_auth import _outcomes

    def interrupted(result: int | None, error: int | None) -> None:
        raise KeyboardInterrupt

    cancelled: list[_calls._Call] = []
    cancel = _calls._Call.cancel

    def spy(call: _calls._Call) -> None:
        cancelled.append(call)
        cancel(call)

    monkeypatch.setattr(_calls._Call, "cancel", spy)
    emu.fault("/methods", "hold")

    async def main(auth: AsyncPortalAuth) -> None:
        # A call whose completion is queued and not yet run: its read raises KeyboardInterrupt.
        monkeypatch.setattr(_outcomes.RESULT, "_read", interrupted)
        _calls.begin(_calls._Call(auth._handle_redirect("otherapp://x")))
        await auth.get_methods()

    auth = _client(emu, AsyncPortalAuth)
    try:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(main(auth))
    finally:
        emu.call("POST", "release")
        auth.close()
    assert [call.start.callback for call in cancelled] == [_outcomes.METHODS]
