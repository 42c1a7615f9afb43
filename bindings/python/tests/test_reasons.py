"""Errors that say what the user does next: the reasons of a refused TOTP code, an expired
step and a used link, reasons that print as names with a sentence for the user, the typed
code's helper, openers that raise or find no browser, and the magic link pasted into a
terminal (over SSH)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from conftest import Emulator
from test_browser import loopback_environment
from test_magic_link import mail

import portal_auth
from portal_auth import (
    AsyncPortalAuth,
    AuthenticatedResult,
    MagicLinkConfig,
    NetworkFailureReason,
    PortalAuth,
    SignInClosedReason,
    SignInUnavailable,
    SignInUnavailableReason,
    StorageFailureReason,
    TotpRequiredResult,
    Unauthorized,
    UnauthorizedReason,
    normalize_totp_code,
)

ALL_REASONS = [*StorageFailureReason, *SignInUnavailableReason, *SignInClosedReason, *UnauthorizedReason,
               *NetworkFailureReason]


def wrong(code: str) -> str:
    return f"{(int(code) + 500_000) % 1_000_000:06d}"


def step_of(client: PortalAuth, emu: Emulator, env: str, email: str) -> TotpRequiredResult:
    step = client.handle_redirect(emu.grant_redirect(env, email))
    assert isinstance(step, TotpRequiredResult)
    return step


def test_a_refused_code_is_to_retype_and_the_step_says_when_it_expires(
    make_client: Callable[..., PortalAuth], emu: Emulator, env: str
) -> None:
    client = make_client(env, storage="memory")
    step = step_of(client, emu, env, "retype@example.com")
    now = time.time()
    assert step.expires_at is not None and now + 590 <= step.expires_at <= now + 601
    code = emu.totp_code(env, "retype@example.com")
    with pytest.raises(Unauthorized) as refused:
        client.verify_totp(wrong(code), step.user_jwt)
    assert refused.value.reason is UnauthorizedReason.TOTP_CODE_REJECTED
    assert isinstance(client.verify_totp(code, step.user_jwt), AuthenticatedResult)  # the same step


def test_a_step_expired_by_the_servers_clock_is_to_sign_in_again(
    make_client: Callable[..., PortalAuth], emu: Emulator, env: str
) -> None:
    client = make_client(env, storage="memory")
    step = step_of(client, emu, env, "late@example.com")
    assert step.expires_at is not None and step.expires_at > time.time()
    emu.call("POST", "control", {"clockOffsetSeconds": 660})  # eleven minutes later, by the server's clock
    try:
        with pytest.raises(Unauthorized) as late:
            client.verify_totp(emu.totp_code(env, "late@example.com"), step.user_jwt)
    finally:
        emu.call("POST", "control", {"clockOffsetSeconds": 0})
    assert late.value.reason is UnauthorizedReason.TOTP_STEP_EXPIRED
    assert len(emu.requests("/totps/validations")) >= 1  # still sent: the server decides


def test_a_401_after_a_lost_answer_says_the_last_attempt_may_have_completed(
    make_client: Callable[..., PortalAuth], emu: Emulator, env: str
) -> None:
    client = make_client(env, storage="memory")
    step = step_of(client, emu, env, "lost@example.com")
    emu.fault("/totps/validations", "lost")  # the server signs the user in; its answer is lost
    with pytest.raises(portal_auth.NetworkError) as lost:
        client.verify_totp(emu.totp_code(env, "lost@example.com"), step.user_jwt)
    assert lost.value.reason is NetworkFailureReason.CONNECTION_RESET
    with pytest.raises(Unauthorized) as unknown:
        client.verify_totp(emu.totp_code(env, "lost@example.com"), step.user_jwt)
    assert unknown.value.reason is UnauthorizedReason.OUTCOME_UNKNOWN
    assert "answer was lost" in unknown.value.reason.user_message
    assert len(emu.requests("/totps/validations")) == 2  # nothing added or repeated


def test_a_used_link_is_to_request_a_new_one(make_client: Callable[..., PortalAuth], emu: Emulator) -> None:
    env = emu.environment(totp=False)
    url = emu.grant_redirect(env, "used@example.com")
    assert isinstance(make_client(env, storage="memory").handle_redirect(url), AuthenticatedResult)
    with pytest.raises(Unauthorized) as used:
        make_client(env, storage="memory").handle_redirect(url)  # another process's client
    assert used.value.reason is UnauthorizedReason.LINK_USED and used.value.status == 401


def test_a_401_of_a_call_that_cannot_tell_has_no_reason(make_client: Callable[..., PortalAuth]) -> None:
    with pytest.raises(Unauthorized) as refused:
        make_client("env-unknown", storage="memory").get_methods()
    assert refused.value.reason is None


def test_reasons_print_as_names_with_a_sentence_for_the_user() -> None:
    reason = StorageFailureReason.KEYRING_LOCKED
    assert (str(reason), f"{reason}", f"{reason:>16}", "%s" % reason) == (
        "KEYRING_LOCKED", "KEYRING_LOCKED", "  KEYRING_LOCKED", "KEYRING_LOCKED")
    assert reason == 1 and repr(reason) == "<StorageFailureReason.KEYRING_LOCKED: 1>"
    assert reason.user_message == "Your keyring is locked. Unlock it, then try again."
    sentences = [member.user_message for member in ALL_REASONS]
    assert len(set(sentences)) == len(ALL_REASONS)
    assert all(s.endswith(".") and "\n" not in s for s in sentences)
    assert SignInClosedReason.SIGN_IN_CANCELLED.user_message != SignInClosedReason.SIGN_IN_TIMED_OUT.user_message


@pytest.mark.parametrize(("typed", "code"), [
    ("123456", "123456"), ("123 456", "123456"), (" 123-456\n", "123456"), ("123\u2009456", "123456"),
    ("12345", None), ("1234567", None), ("12a456", None), ("", None), ("12\x003456", None), ("\ud800", None),
])
def test_a_typed_code_loses_its_spaces_and_dashes_only(typed: str, code: str | None) -> None:
    assert normalize_totp_code(typed) == code


def test_an_opener_that_raises_is_the_errors_cause(emu: Emulator) -> None:
    env, redirect = loopback_environment(emu)
    problem = OSError("no display")

    def opener(url: str, ephemeral: bool) -> None:
        raise problem

    with PortalAuth(auth_environment_id=env, redirect_url=redirect, api_host=emu.url) as auth:
        auth.set_browser_opener(opener)
        with pytest.raises(SignInUnavailable) as failed:
            auth.sign_in_with_google()
    assert failed.value.reason is SignInUnavailableReason.OPENER_FAILED
    assert failed.value.__cause__ is problem and failed.value.url is None
    assert "no display" not in str(failed.value)


def test_an_opener_with_no_browser_fails_at_once_with_the_url(emu: Emulator) -> None:
    env, redirect = loopback_environment(emu)
    given: list[str] = []

    def opener(url: str, ephemeral: bool) -> bool:
        given.append(url)
        return False  # as webbrowser.open says it found no browser

    with PortalAuth(auth_environment_id=env, redirect_url=redirect, api_host=emu.url) as auth:
        auth.set_browser_opener(opener)
        with pytest.raises(SignInUnavailable) as nowhere:
            auth.sign_in_with_apple(timeout=120)  # a wait would end as SignInClosed
    assert nowhere.value.reason is SignInUnavailableReason.NO_BROWSER
    assert nowhere.value.url == given[0] and "/oauth/apple/" in given[0]
    assert given[0] not in str(nowhere.value) and nowhere.value.__cause__ is None


def test_the_async_client_keeps_the_openers_exception_too(emu: Emulator) -> None:
    env, redirect = loopback_environment(emu)

    def opener(url: str, ephemeral: bool) -> None:
        raise LookupError("no browser configured")

    async def sign_in() -> SignInUnavailable:
        async with AsyncPortalAuth(auth_environment_id=env, redirect_url=redirect, api_host=emu.url) as auth:
            auth.set_browser_opener(opener)
            try:
                await auth.sign_in_with_google()
            except SignInUnavailable as error:
                return error
        raise AssertionError("the sign-in did not fail")

    failed = asyncio.run(sign_in())
    assert isinstance(failed.__cause__, LookupError)


# The magic link pasted into a terminal.

class Terminal:
    """A pipe standing for the terminal: `read`, what the program reads; `write`, what the
    user types. Each end is closed once (a number closed twice may be another's by then)."""

    def __init__(self) -> None:
        self.read, self.write = os.pipe()
        self.open = {self.read, self.write}

    def close(self, end: int) -> None:
        if end in self.open:
            self.open.remove(end)
            os.close(end)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    pipe = Terminal()
    yield pipe
    for end in (pipe.read, pipe.write):
        pipe.close(end)


def loopback_clients(emu: Emulator, count: int = 1) -> list[PortalAuth]:
    """Clients of one new environment (TOTP on) with a loopback redirect URL."""
    env, redirect = loopback_environment(emu, totp=True)
    return [PortalAuth(auth_environment_id=env, redirect_url=redirect, api_host=emu.url,
                       magic_link=MagicLinkConfig(from_email="hello@auth.example.com", template_id="tmpl"),
                       storage="memory") for _ in range(count)]


def later(action: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=action)
    thread.start()
    return thread


def test_a_pasted_link_completes_a_loopback_sign_in(
    emu: Emulator, terminal: Terminal, capfd: pytest.CaptureFixture[str]
) -> None:
    read, write = terminal.read, terminal.write
    email = "pasted-over-ssh@example.com"
    (auth,) = loopback_clients(emu)
    with auth:
        os.write(write, b"\n   \nhttps://example.com/not-a-link\n")
        paste = later(lambda: os.write(write, mail(emu, email, 1, "link").encode() + b"\n"))
        result = auth.sign_in_with_magic_link(email, paste_from=read)
        paste.join()
        assert isinstance(result, TotpRequiredResult)
        # Nothing reads the terminal any more: what comes next is the caller's.
        os.write(write, b"123 456\n")
        assert os.read(read, 100) == b"123 456\n"
    assert capfd.readouterr().err.count("that is not a sign-in link of this app") == 1


def test_with_a_custom_scheme_the_link_is_sent_and_only_a_paste_completes(
    make_client: Callable[..., PortalAuth], emu: Emulator, env: str, terminal: Terminal
) -> None:
    read, write = terminal.read, terminal.write
    email = "custom-scheme@example.com"
    auth = make_client(env, storage="memory")
    paste = later(lambda: os.write(write, mail(emu, email, 1, "link").encode() + b"\n"))
    result = auth.sign_in_with_magic_link(email, paste_from=read)
    paste.join()
    assert isinstance(result, TotpRequiredResult) and len(emu.requests("/magic-links")) >= 1
    terminal.close(write)
    with pytest.raises(EOFError):  # the terminal closed before anything was pasted
        auth.sign_in_with_magic_link("nobody-pastes@example.com", paste_from=read)


def test_a_pasted_used_link_ends_the_sign_in_with_its_reason(emu: Emulator, terminal: Terminal) -> None:
    read, write = terminal.read, terminal.write
    auth, elsewhere = loopback_clients(emu, 2)
    with auth, elsewhere:
        email = "spent@example.com"
        pasting = later(lambda: (elsewhere.handle_redirect(link := mail(emu, email, 1, "link")),
                                 os.write(write, link.encode() + b"\n")))
        with pytest.raises(Unauthorized) as used:
            auth.sign_in_with_magic_link(email, paste_from=read)
        pasting.join()
    assert used.value.reason is UnauthorizedReason.LINK_USED


def test_ctrl_c_while_waiting_cancels_the_sign_in(emu: Emulator, terminal: Terminal) -> None:
    read = terminal.read
    (auth,) = loopback_clients(emu)
    with auth:
        email = "interrupted@example.com"
        # The interruption comes once the email has gone: the wait is under way.
        interrupting = later(lambda: (mail(emu, email, 1, "link"), os.kill(os.getpid(), signal.SIGINT)))
        # Python's own Ctrl-C handler, also where the process started with SIGINT ignored (a
        # shell's background job, as make check runs pytest).
        inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            with pytest.raises(KeyboardInterrupt):
                auth.sign_in_with_magic_link(email, paste_from=read)
        finally:
            signal.signal(signal.SIGINT, inherited)
        interrupting.join()
        # That sign-in has ended (its listener closed): the next one starts, and times out.
        with pytest.raises(portal_auth.SignInClosed) as closed:
            auth.sign_in_with_magic_link("next@example.com", timeout=0.5)
        assert closed.value.reason is SignInClosedReason.SIGN_IN_TIMED_OUT


def test_the_docs_table_is_the_librarys() -> None:
    from pathlib import Path

    table = (Path(__file__).resolve().parents[3] / "docs" / "errors.md").read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    documented = {int(row[0][2:]): (row[1].strip("`"), row[3].removesuffix(" |")) for row in rows}
    assert documented == {member.value: (member.name, member.user_message) for member in ALL_REASONS}
