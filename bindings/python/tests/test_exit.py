"""Exit never stalls (docs/protocol.md §5): at exit every call in flight is cancelled, and the
process waits only for the exchanges already on the wire, which persist their sessions, each
at most its request timeout. Each program here leaves a call held by the emulator (which
answers only when the test releases it) and ends; the process must end while that request
is still held, long before its request timeout, and a second Ctrl-C ends an exit that waits
for an exchange."""

from __future__ import annotations

import signal
import sys
import time

from conftest import CALLBACK, Emulator, Interaction

# Each program: a client of environment argv[1] at the emulator argv[2], its log lines and
# the binding's own on stderr, and `wait(path)`, which returns once the emulator holds a
# request to that path.
PRELUDE = """
import asyncio, logging, sys, threading, urllib.request
from portal_auth import AsyncPortalAuth, PortalAuth
logging.basicConfig(format="%(name)s %(levelname)s %(message)s")
logging.getLogger("portal_auth").setLevel(logging.DEBUG)
environment, api_host = sys.argv[1], sys.argv[2]
def wait(path):
    urllib.request.urlopen(f"{api_host}/_emulator/wait?path={path}&count=1&timeout=60").read()
"""


def run(emu: Emulator, program: str, *arguments: str) -> Interaction:
    return Interaction(sys.executable, "-c", PRELUDE + program, emu.environment(totp=False), emu.url, *arguments)


# An exit that waited for a held call would last its request timeout (the library's default,
# 30 s, in these programs; 60 s where one says so); a quick one, however busy the machine,
# ends well within this.
QUICK_EXIT = 15


def ended_at_once(program: Interaction, since: float) -> int:
    """Waits for the program's end (at most 60 s, as the library's timeouts would end a
    stall); its exit status, once the end came within QUICK_EXIT seconds of `since`."""
    status = program.process.wait(timeout=60)
    elapsed = time.monotonic() - since
    assert elapsed < QUICK_EXIT, f"the process took {elapsed:.1f} s to exit:\n{program.output.decode(errors='replace')}"
    return status


def test_ctrl_c_during_a_blocking_call_exits_at_once(emu: Emulator) -> None:
    emu.fault("/methods", "hold")
    program = run(emu, "print('calling', flush=True)\nPortalAuth(auth_environment_id=environment, redirect_url='myapp://x', api_host=api_host).get_methods()\n")
    program.expect("calling")
    emu.wait("/methods", 1)
    program.process.send_signal(signal.SIGINT)
    since = time.monotonic()
    assert ended_at_once(program, since) == -signal.SIGINT
    assert emu.call("POST", "release")["released"] == 1  # exit did not wait for the answer


def ends_at_once_leaving_the_call_held(emu: Emulator, program: str) -> None:
    """`program` leaves a get_methods in flight, prints "exiting" and ends: the process exits
    at once, cleanly, with the request still held."""
    emu.fault("/methods", "hold")
    running = run(emu, program + "print('exiting', flush=True)\n")
    running.expect("exiting")
    since = time.monotonic()
    assert ended_at_once(running, since) == 0
    assert emu.call("POST", "release")["released"] == 1
    # Nothing was waited for, so nothing is said.
    assert running.process.stdout is not None
    assert b"finishing the sign-in" not in running.output + running.process.stdout.read()


def test_a_daemon_thread_s_call_in_flight_does_not_hold_exit(emu: Emulator) -> None:
    ends_at_once_leaving_the_call_held(emu, (
        "auth = PortalAuth(auth_environment_id=environment, redirect_url='myapp://x', api_host=api_host)\n"
        "threading.Thread(target=auth.get_methods, daemon=True).start()\n"
        "wait('/methods')\n"
    ))


def test_a_pending_task_at_the_end_of_asyncio_run_does_not_hold_exit(emu: Emulator) -> None:
    ends_at_once_leaving_the_call_held(emu, (
        "async def main():\n"
        "    auth = AsyncPortalAuth(auth_environment_id=environment, redirect_url='myapp://x', api_host=api_host)\n"
        "    asyncio.ensure_future(auth.get_methods())  # never awaited: asyncio.run cancels it\n"
        "    await asyncio.to_thread(wait, '/methods')\n"
        "asyncio.run(main())\n"
    ))


def test_exit_waits_for_an_exchange_on_the_wire_at_most_its_request_timeout(emu: Emulator) -> None:
    """Its session must be persisted, so exit waits for it; never past its request timeout,
    after which the library ends it (here as no response: nothing was persisted). A few
    seconds, so that the exit begins while the request is still held however busy the
    machine."""
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "exit-timeout@example.com")
    emu.fault("/magic-links/validations", "hold")
    program = Interaction(sys.executable, "-c", PRELUDE + (
        "auth = PortalAuth(auth_environment_id=environment, redirect_url=sys.argv[3], api_host=api_host, request_timeout=5)\n"
        "threading.Thread(target=auth.handle_redirect, args=(sys.argv[4],), daemon=True).start()\n"
        "wait('/magic-links/validations')\n"
    ), env, emu.url, CALLBACK, url)
    program.expect("portal-auth: finishing the sign-in before exit (at most 5 s); Ctrl-C to abort it.")
    program.expect("exit: waiting at most 5.0 s for 1 calls in flight")
    # At most the 5 s it said, then a quick exit: not the held request's answer (never sent).
    assert ended_at_once(program, time.monotonic()) == 0
    assert emu.call("POST", "release")["released"] == 1


def test_a_second_ctrl_c_ends_an_exit_that_waits_for_an_exchange(emu: Emulator) -> None:
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "exit-twice@example.com")
    emu.fault("/magic-links/validations", "hold")
    program = Interaction(sys.executable, "-c", PRELUDE + (
        "auth = PortalAuth(auth_environment_id=environment, redirect_url=sys.argv[3], api_host=api_host, request_timeout=60)\n"
        "print('calling', flush=True)\n"
        "auth.handle_redirect(sys.argv[4])\n"
    ), env, emu.url, CALLBACK, url)
    program.expect("calling")
    emu.wait("/magic-links/validations", 1)
    program.process.send_signal(signal.SIGINT)  # the exchange is on the wire: exit waits for it
    program.expect("portal-auth: finishing the sign-in before exit (at most 60 s); Ctrl-C to abort it.")
    program.expect("exit: waiting at most 60.0 s for 1 calls in flight")
    program.process.send_signal(signal.SIGINT)
    since = time.monotonic()
    assert ended_at_once(program, since) == -signal.SIGINT
    assert emu.call("POST", "release")["released"] == 1
