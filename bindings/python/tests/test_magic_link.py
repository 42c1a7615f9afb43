"""Magic-link sign-in in one call from Python (sign_in_with_magic_link, blocking and asyncio):
real headless Chromium opens the email's button in the emulator's outbox, follows it to the
loopback listener, and the client finishes with no pasted URL; the TOTP branch, a timeout,
close() and a cancelled task, the guard shared with the browser sign-ins, and a link handled
(pasted) while the sign-in waits."""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FROM_EMAIL, TEMPLATE_ID, Emulator, as_another_user
from test_browser import chromium, loopback_environment

import portal_auth
from portal_auth import AsyncPortalAuth, AuthenticatedResult, MagicLinkConfig, PortalAuth, TotpRequiredResult

MAGIC_LINK = MagicLinkConfig(from_email=FROM_EMAIL, template_id=TEMPLATE_ID)
SIGNED_IN_PAGE = "You are signed in. You can close this window and go back to the application."
TOTP_PAGE = "enter the code from your authenticator app"


@pytest.fixture
def loopback(emu: Emulator) -> tuple[str, str]:
    return loopback_environment(emu, totp=False)


@pytest.fixture
def client(emu: Emulator, loopback: tuple[str, str]) -> Iterator[PortalAuth]:
    environment_id, redirect = loopback
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                    magic_link=MAGIC_LINK) as auth:
        yield auth


def mail(emu: Emulator, email: str, count: int, key: str) -> str:
    """The `key` ("link", the redirect; or "emailLink", the email's button) of the last email
    to `email`, once `count` have been sent (the emulator waits for them)."""
    query = urllib.parse.urlencode({"email": email, "count": count, "timeout": 30})
    return str(emu.call("GET", "outbox?" + query)["messages"][-1][key])


def open_in_chromium(emu: Emulator, email: str, profile: Path, count: int = 1) -> str:
    """The email's button opened in Chromium, as the user would: the page it ends on."""
    link = mail(emu, email, count, "emailLink")
    assert "/_emulator/mail/open?id=" in link
    page = chromium(link, False, profile)()
    assert page.returncode == 0
    return page.stdout


def listening(redirect: str) -> bool:
    port = urllib.parse.urlsplit(redirect).port
    assert port is not None
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class InThread:
    """`work()` on a thread of its own: its value or its exception, once joined."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None

        def run() -> None:
            try:
                self.value = work()
            except BaseException as error:  # noqa: BLE001 - kept for the test to look at
                self.error = error

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self) -> Any:
        self.thread.join(120)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.value


def test_blocking_sign_in_with_chromium(client: PortalAuth, loopback: tuple[str, str], emu: Emulator,
                                        tmp_path: Path) -> None:
    browser = InThread(lambda: open_in_chromium(emu, "py-magic@example.com", tmp_path))
    result = client.sign_in_with_magic_link(" Py-Magic@Example.com ")
    assert SIGNED_IN_PAGE in browser.join()
    assert isinstance(result, AuthenticatedResult) and result.session.get_token()
    assert not listening(loopback[1])
    restored = client.restore_session()  # persisted before it returned
    assert restored is not None and restored.end_user_id == result.session.end_user_id
    assert len(emu.requests("/magic-links/validations")) == 1


def test_another_users_request_neither_ends_nor_takes_the_wait(client: PortalAuth, loopback: tuple[str, str],
                                                               emu: Emulator, tmp_path: Path) -> None:
    email = "py-other-user@example.com"
    waiting = InThread(lambda: client.sign_in_with_magic_link(email))
    mail(emu, email, 1, "link")  # sent: the listener was bound before it
    # Another user's process asks the listener to end the wait. Its connection is closed
    # unread: no reply at all (curl's 000; exit 52, closed, or 56, reset).
    other = as_another_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "30",
                            loopback[1] + "?error=access_denied")
    assert (other.stdout, other.returncode in (52, 56)) == ("000", True), other.stderr
    # The user's own browser still signs in.
    assert SIGNED_IN_PAGE in open_in_chromium(emu, email, tmp_path)
    assert isinstance(waiting.join(), AuthenticatedResult)


def test_asyncio_sign_in_with_totp_enrollment(emu: Emulator, tmp_path: Path) -> None:
    environment_id, redirect = loopback_environment(emu, totp=True)
    email = "py-magic-totp@example.com"

    async def main() -> None:
        async with AsyncPortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                                   magic_link=MAGIC_LINK, storage="memory") as auth:
            step, page = await asyncio.gather(
                auth.sign_in_with_magic_link(email), asyncio.to_thread(open_in_chromium, emu, email, tmp_path)
            )
            assert TOTP_PAGE in page
            assert isinstance(step, TotpRequiredResult) and step.totp_secret
            result = await auth.verify_totp(emu.totp_code(environment_id, email), step.user_jwt)
            assert result.session.end_user_id == step.end_user_id

    asyncio.run(main())


def test_a_timeout_closes_it_and_exchanges_nothing(client: PortalAuth, loopback: tuple[str, str],
                                                   emu: Emulator) -> None:
    with pytest.raises(portal_auth.SignInClosed) as raised:
        client.sign_in_with_magic_link("py-late@example.com", timeout=0.2)
    assert raised.value.reason is portal_auth.SignInClosedReason.SIGN_IN_TIMED_OUT
    assert mail(emu, "py-late@example.com", 1, "link")  # the email went out
    assert emu.requests("/magic-links/validations") == []
    assert not listening(loopback[1])
    # The guard is released: the next sign-in starts (and times out in its turn).
    with pytest.raises(portal_auth.SignInClosed):
        client.sign_in_with_magic_link("py-late@example.com", timeout=0.2)


def test_close_ends_the_wait(emu: Emulator, loopback: tuple[str, str]) -> None:
    environment_id, redirect = loopback
    auth = PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                      magic_link=MAGIC_LINK, storage="memory")
    waiting = InThread(lambda: auth.sign_in_with_magic_link("py-closed@example.com"))
    link = mail(emu, "py-closed@example.com", 1, "link")
    auth.close()
    with pytest.raises(portal_auth.SignInClosed) as raised:
        waiting.join()
    assert raised.value.reason is portal_auth.SignInClosedReason.CLIENT_CLOSED
    assert not listening(redirect)
    # Nothing was exchanged: the link still signs in, with another client.
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                    storage="memory") as other:
        assert isinstance(other.handle_redirect(link), AuthenticatedResult)


def test_cancelling_the_awaiting_task_ends_the_wait(emu: Emulator, loopback: tuple[str, str]) -> None:
    environment_id, redirect = loopback

    async def main() -> None:
        async with AsyncPortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                                   magic_link=MAGIC_LINK, storage="memory") as auth:
            task = asyncio.create_task(auth.sign_in_with_magic_link("py-cancel@example.com"))
            await asyncio.to_thread(mail, emu, "py-cancel@example.com", 1, "link")
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The listener is closed by then, and the guard released.
            assert not listening(redirect)
            with pytest.raises(portal_auth.SignInClosed):
                await auth.sign_in_with_magic_link("py-cancel@example.com", timeout=0.2)
        assert emu.requests("/magic-links/validations") == []

    asyncio.run(main())


def test_one_sign_in_at_a_time_with_the_browser_sign_ins(client: PortalAuth, emu: Emulator) -> None:
    opened = threading.Event()
    client.set_browser_opener(lambda url, ephemeral: opened.set())
    google = InThread(client.sign_in_with_google)
    assert opened.wait(60)
    emu.call("DELETE", "requests")
    with pytest.raises(portal_auth.SignInInProgress):
        client.sign_in_with_magic_link("py-guard@example.com")
    assert emu.requests("/magic-links") == []  # refused before any email
    client.close()
    with pytest.raises(portal_auth.SignInClosed):
        google.join()


def test_a_magic_link_sign_in_holds_the_guard_too(client: PortalAuth, emu: Emulator) -> None:
    waiting = InThread(lambda: client.sign_in_with_magic_link("py-guard2@example.com"))
    mail(emu, "py-guard2@example.com", 1, "link")
    with pytest.raises(portal_auth.SignInInProgress):
        client.sign_in_with_google()
    client.close()
    with pytest.raises(portal_auth.SignInClosed):
        waiting.join()


def test_the_link_handled_meanwhile_completes_it_once(client: PortalAuth, loopback: tuple[str, str],
                                                      emu: Emulator) -> None:
    waiting = InThread(lambda: client.sign_in_with_magic_link("py-pasted@example.com"))
    pasted = client.handle_redirect(mail(emu, "py-pasted@example.com", 1, "link"))
    result = waiting.join()
    assert isinstance(pasted, AuthenticatedResult) and isinstance(result, AuthenticatedResult)
    assert result.session is pasted.session
    assert len(emu.requests("/magic-links/validations")) == 1
    assert not listening(loopback[1])


def test_errors_before_any_email(emu: Emulator, loopback: tuple[str, str], env: str) -> None:
    environment_id, redirect = loopback
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url) as bare:
        with pytest.raises(portal_auth.MagicLinkNotConfigured):
            bare.sign_in_with_magic_link("py-none@example.com")
    with PortalAuth(auth_environment_id=environment_id, redirect_url=redirect, api_host=emu.url,
                    magic_link=MAGIC_LINK) as auth:
        with pytest.raises(portal_auth.InvalidArgument) as blank:
            auth.sign_in_with_magic_link("   ")
        assert blank.value.name == "email"
        with pytest.raises(portal_auth.InvalidArgument):
            auth.sign_in_with_magic_link("py@example.com", timeout=float("nan"))
    with PortalAuth(auth_environment_id=env, redirect_url="myapp://auth/callback", api_host=emu.url,
                    magic_link=MAGIC_LINK) as custom:
        with pytest.raises(portal_auth.SignInUnavailable) as not_loopback:
            custom.sign_in_with_magic_link("py@example.com")
        assert not_loopback.value.reason is portal_auth.SignInUnavailableReason.REDIRECT_NOT_LOOPBACK
    with socket.socket() as taken, PortalAuth(auth_environment_id=environment_id, redirect_url=redirect,
                                              api_host=emu.url, magic_link=MAGIC_LINK) as auth:
        taken.bind(("127.0.0.1", urllib.parse.urlsplit(redirect).port or 0))
        taken.listen()
        with pytest.raises(portal_auth.SignInUnavailable) as in_use:
            auth.sign_in_with_magic_link("py@example.com")
        assert in_use.value.reason is portal_auth.SignInUnavailableReason.PORT_IN_USE
    assert emu.requests("/magic-links") == []
