"""PortalAuth (blocking) and AsyncPortalAuth (asyncio): one client of one auth environment,
over a portal_auth handle. Both share the constructor and the way each call starts; they
differ only in how they wait."""

from __future__ import annotations

import ctypes
import math
import threading
import weakref
from collections.abc import Awaitable, Callable, Generator
from types import TracebackType
from typing import Any

from . import _calls, _native, _opener, _outcomes, _storage
from .errors import InvalidArgument, MagicLinkNotConfigured, PortalAuthError, from_code, raise_from_out
from .results import AuthenticatedResult, AuthMethodsResult, AuthorizeUrlResult, MagicLinkConfig, TotpRequiredResult
from .session import PortalSession

DEFAULT_API_HOST = "api.portalhq.io"

Storage = None | str | _storage.SessionStore


def _milliseconds(seconds: float | None, name: str) -> int:
    """A timeout in seconds as the C ABI's int32 of milliseconds, whose meaning the library
    decides (zero or less: its default); None is 0. Only what no int32 of milliseconds can
    hold is refused."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InvalidArgument(name)
    try:
        milliseconds = math.ceil(seconds * 1000)
    except (OverflowError, ValueError):  # too large for a float, or not a number
        raise InvalidArgument(name) from None
    if not -0x80000000 <= milliseconds <= 0x7FFFFFFF:
        raise InvalidArgument(name)
    return milliseconds


class _Ready:
    """An awaitable that is already done: a synchronous method of AsyncPortalAuth works
    whether or not its caller awaits it."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


class _Client:
    """What both clients share: the handle, its lifetime, and the starters of every call."""

    def __init__(
        self,
        auth_environment_id: str,
        redirect_url: str,
        api_host: str = DEFAULT_API_HOST,
        magic_link: MagicLinkConfig | None = None,
        is_account_abstracted: bool | None = None,
        storage: Storage = None,
        *,
        connect_timeout: float | None = None,
        request_timeout: float | None = None,
        application_id: str | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._handle: int | None = None
        self._magic_link = magic_link
        # Tags this client's browser sign-ins, which close() ends (each holds a port).
        self._sign_ins = object()
        lib = _native.lib()
        options = _native.Options()
        lib.portal_auth_options_init(ctypes.byref(options), ctypes.sizeof(options))
        # ctypes keeps the bytes assigned to the struct alive with it.
        options.auth_environment_id = _native.c_text(auth_environment_id, "auth_environment_id")
        options.redirect_url = _native.c_text(redirect_url, "redirect_url")
        options.api_host = _native.c_text(api_host, "api_host")
        if magic_link is not None:
            if not isinstance(magic_link, MagicLinkConfig):
                raise InvalidArgument("magic_link")
            options.magic_link_from_email = _native.c_text(magic_link.from_email, "from_email")
            options.magic_link_template_id = _native.c_text(magic_link.template_id, "template_id")
        if is_account_abstracted is not None and not isinstance(is_account_abstracted, bool):
            raise InvalidArgument("is_account_abstracted")
        options.is_account_abstracted = _native.UNSET if is_account_abstracted is None else int(is_account_abstracted)
        options.connect_timeout_ms = _milliseconds(connect_timeout, "connect_timeout")
        options.request_timeout_ms = _milliseconds(request_timeout, "request_timeout")
        if application_id is not None:
            options.application_id = _native.c_text(application_id, "application_id")
        if storage is None:
            options.storage = _native.STORAGE_KEYRING
        elif isinstance(storage, str):
            if storage != "memory":
                raise InvalidArgument("storage")
            options.storage = _native.STORAGE_MEMORY
        elif _storage.is_store(storage):
            options.storage = _native.STORAGE_HOST
            options.host_storage = ctypes.pointer(_storage.callbacks(storage))
        else:
            raise InvalidArgument("storage")

        client = ctypes.c_void_p()
        error = ctypes.c_void_p()
        raise_from_out(lib.portal_auth_new(ctypes.byref(options), ctypes.byref(client), ctypes.byref(error)), error)
        # Its calls complete on the threads that wait for them (_calls), never on the library's.
        if lib.portal_auth_set_completion_queue(client.value, _native.TRUE) != _native.OK:
            lib.portal_auth_free(client.value)
            raise PortalAuthError("portal-auth has no file descriptor left for its completion queue.")
        self._handle = client.value
        self._opener = _opener.new_key()
        # Freed by close(), or when the client is collected; calls in flight still complete.
        self._free = weakref.finalize(self, _free, client.value, self._opener)

    def _close(self) -> None:
        with self._lock:
            self._handle = None
            self._free()
        _calls.cancel_group(self._sign_ins)

    def _with_handle(self, use: Callable[..., Any], *arguments: Any) -> int:
        """Calls `use(handle, *arguments)` under the lock: close() cannot free the handle while
        a call starts on it, or a setter runs."""
        with self._lock:
            if self._handle is None:
                raise PortalAuthError("This portal_auth client is closed.")
            return int(use(self._handle, *arguments))

    def _set_browser_opener(self, opener: _opener.Opener | None) -> None:
        if opener is not None and not callable(opener):
            raise InvalidArgument("opener")
        lib = _native.lib()

        def install(handle: int) -> int:
            _opener.install(self._opener, opener)
            pointer = _opener.NONE if opener is None else _opener.OPEN
            return int(lib.portal_auth_set_browser_opener(handle, pointer, self._opener))

        code = self._with_handle(install)
        if code != _native.OK:
            raise from_code(code, "opener")

    @property
    def prefers_ephemeral_web_browser_session(self) -> bool:
        """Passed to the opener as `ephemeral`: ask for a private browser window."""
        lib = _native.lib()
        return self._with_handle(lib.portal_auth_prefers_ephemeral_web_browser_session) == 1

    @prefers_ephemeral_web_browser_session.setter
    def prefers_ephemeral_web_browser_session(self, prefers: bool) -> None:
        if not isinstance(prefers, bool):
            raise InvalidArgument("prefers_ephemeral_web_browser_session")
        lib = _native.lib()
        code = self._with_handle(lib.portal_auth_set_prefers_ephemeral_web_browser_session, int(prefers))
        if code != _native.OK:
            raise from_code(code, "prefers_ephemeral_web_browser_session")

    def _starter(self, function: str, *arguments: Any) -> _calls.Starter:
        """Starts portal_auth_<function>(client, *arguments, callback, user_data, &call)."""
        native = getattr(_native.lib(), function)

        def start(callback: Any, key: int, out_call: ctypes.c_void_p) -> int:
            return self._with_handle(native, *arguments, callback, key, ctypes.byref(out_call))

        return start

    def _get_methods(self) -> tuple[_calls.Callback[AuthMethodsResult], _calls.Starter]:
        return _outcomes.METHODS, self._starter("portal_auth_get_methods")

    def _send_magic_link(self, email: str) -> tuple[_calls.Callback[None], _calls.Starter]:
        if self._magic_link is None:  # docs/protocol.md §3: checked before the email
            raise MagicLinkNotConfigured()
        return _calls.DONE, self._starter("portal_auth_send_magic_link", _native.c_text(email, "email"))

    def _login_with_google(self) -> tuple[_calls.Callback[AuthorizeUrlResult], _calls.Starter]:
        return _outcomes.URL, self._starter("portal_auth_login_with_google")

    def _login_with_apple(self) -> tuple[_calls.Callback[AuthorizeUrlResult], _calls.Starter]:
        return _outcomes.URL, self._starter("portal_auth_login_with_apple")

    def _handle_redirect(
        self, url: str
    ) -> tuple[_calls.Callback[AuthenticatedResult | TotpRequiredResult | None], _calls.Starter]:
        return _outcomes.RESULT, self._starter("portal_auth_handle_redirect", _native.c_text(url, "url"))

    def _verify_totp(
        self, code: str, user_jwt: str
    ) -> tuple[_calls.Callback[AuthenticatedResult | TotpRequiredResult | None], _calls.Starter]:
        return _outcomes.RESULT, self._starter(
            "portal_auth_verify_totp", _native.c_text(code, "code"), _native.c_text(user_jwt, "user_jwt")
        )

    def _restore_session(self) -> tuple[_calls.Callback[PortalSession | None], _calls.Starter]:
        return _outcomes.SESSION, self._starter("portal_auth_restore_session")

    def _clear_persisted_session(self) -> tuple[_calls.Callback[None], _calls.Starter]:
        return _calls.DONE, self._starter("portal_auth_clear_persisted_session")

    def _sign_in(
        self, provider: str, timeout: float | None
    ) -> tuple[_calls.Callback[AuthenticatedResult | TotpRequiredResult | None], _calls.Starter]:
        milliseconds = _milliseconds(timeout, "timeout")
        return _outcomes.RESULT, self._starter(f"portal_auth_sign_in_with_{provider}", milliseconds)


def _free(handle: int | None, opener: int) -> None:
    _native.lib().portal_auth_free(handle)
    _opener.install(opener, None)


def _authenticated(result: AuthenticatedResult | TotpRequiredResult | None) -> AuthenticatedResult:
    if not isinstance(result, AuthenticatedResult):
        raise PortalAuthError("verify_totp did not return a session.")
    return result


def _signed_in(result: AuthenticatedResult | TotpRequiredResult | None) -> AuthenticatedResult | TotpRequiredResult:
    if result is None:
        raise PortalAuthError("The browser sign-in returned no result.")
    return result


class PortalAuth(_Client):
    """Portal's Client Auth, blocking: each call returns when it is done. Safe to use from
    several threads; Ctrl-C during a call cancels it (docs/protocol.md §5) and propagates."""

    def get_methods(self) -> AuthMethodsResult:
        return _calls.blocking(*self._get_methods())

    def send_magic_link(self, email: str) -> None:
        _calls.blocking(*self._send_magic_link(email))

    def login_with_google(self) -> AuthorizeUrlResult:
        return _calls.blocking(*self._login_with_google())

    def login_with_apple(self) -> AuthorizeUrlResult:
        return _calls.blocking(*self._login_with_apple())

    def handle_redirect(self, url: str) -> AuthenticatedResult | TotpRequiredResult | None:
        return _calls.blocking(*self._handle_redirect(url))

    def verify_totp(self, code: str, user_jwt: str) -> AuthenticatedResult:
        return _authenticated(_calls.blocking(*self._verify_totp(code, user_jwt)))

    def restore_session(self) -> PortalSession | None:
        return _calls.blocking(*self._restore_session())

    def clear_persisted_session(self) -> None:
        _calls.blocking(*self._clear_persisted_session())

    def sign_in_with_google(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """Signs in with Google in the user's browser and waits for it to come back to the
        loopback redirect URL (`http://127.0.0.1:<port>/<path>`): `timeout` seconds; None, zero
        or less wait the library's default, 300 s. Raises SignInInProgress, SignInUnavailable, SignInClosed (timeout, Ctrl-C)
        or SignInCallbackIncomplete, or what handle_redirect raises."""
        return _signed_in(_calls.blocking(*self._sign_in("google", timeout), settle_on_cancel=True, group=self._sign_ins))

    def sign_in_with_apple(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """Signs in with Apple in the user's browser; as sign_in_with_google."""
        return _signed_in(_calls.blocking(*self._sign_in("apple", timeout), settle_on_cancel=True, group=self._sign_ins))

    def set_browser_opener(self, opener: _opener.Opener | None) -> None:
        """Opens the browser for sign_in_with_google/apple: `opener(url, ephemeral)`, called
        on a thread the library starts for each sign-in (it may block, and may call this
        client and wait), returns once the browser is launched; an exception fails the
        sign-in with SignInUnavailable. None restores the default ($BROWSER, else xdg-open)."""
        self._set_browser_opener(opener)

    def close(self) -> None:
        """Frees the client. Calls in flight still complete, but a browser sign-in ends as
        SignInClosed (its listener closes); new calls raise PortalAuthError."""
        self._close()

    def __enter__(self) -> PortalAuth:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class AsyncPortalAuth(_Client):
    """Portal's Client Auth for asyncio: the same calls as coroutines. Completions run on the
    awaiting loop's thread (it watches the library's completion queue); cancelling an
    awaiting task cancels its call (docs/protocol.md §5: a request already sent still
    completes and persists its session)."""

    async def get_methods(self) -> AuthMethodsResult:
        return await _calls.awaiting(*self._get_methods())

    async def send_magic_link(self, email: str) -> None:
        await _calls.awaiting(*self._send_magic_link(email))

    async def login_with_google(self) -> AuthorizeUrlResult:
        return await _calls.awaiting(*self._login_with_google())

    async def login_with_apple(self) -> AuthorizeUrlResult:
        return await _calls.awaiting(*self._login_with_apple())

    async def handle_redirect(self, url: str) -> AuthenticatedResult | TotpRequiredResult | None:
        return await _calls.awaiting(*self._handle_redirect(url))

    async def verify_totp(self, code: str, user_jwt: str) -> AuthenticatedResult:
        return _authenticated(await _calls.awaiting(*self._verify_totp(code, user_jwt)))

    async def restore_session(self) -> PortalSession | None:
        return await _calls.awaiting(*self._restore_session())

    async def clear_persisted_session(self) -> None:
        await _calls.awaiting(*self._clear_persisted_session())

    async def sign_in_with_google(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """As PortalAuth.sign_in_with_google. Cancelling the awaiting task ends the wait
        (nothing is exchanged); CancelledError comes once the listener is closed and the
        next sign-in may start."""
        return _signed_in(await _calls.awaiting(*self._sign_in("google", timeout), settle_on_cancel=True, group=self._sign_ins))

    async def sign_in_with_apple(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """As PortalAuth.sign_in_with_google, with Apple."""
        return _signed_in(await _calls.awaiting(*self._sign_in("apple", timeout), settle_on_cancel=True, group=self._sign_ins))

    def set_browser_opener(self, opener: _opener.Opener | None) -> Awaitable[None]:
        """As PortalAuth.set_browser_opener (the opener is a plain function here too); it
        takes effect at once, and awaiting it is optional."""
        self._set_browser_opener(opener)
        return _Ready()

    def close(self) -> Awaitable[None]:
        """Frees the client at once (calls in flight still complete); awaiting it is optional."""
        self._close()
        return _Ready()

    async def __aenter__(self) -> AsyncPortalAuth:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._close()
