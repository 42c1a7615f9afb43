"""PortalAuth (blocking) and AsyncPortalAuth (asyncio): one client of one auth environment,
over a portal_auth handle. Both share the constructor and one declaration of each call (its
C function, its arguments, the callback that reads its outcome, how it ends); they differ
only in how they wait."""

from __future__ import annotations

import _thread
import ctypes
import itertools
import os

from . import _calls, _native, _outcomes, _threads
from ._error_handles import from_code, raise_from_out
from .errors import InvalidArgument, MagicLinkNotConfigured, PortalAuthError, SignInUnavailable
from .results import AuthenticatedResult, MagicLinkConfig, TotpRequiredResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Generator
    from types import TracebackType
    from typing import Any, TypeGuard, TypeVar

    from ._forwarding import RedirectForwarding
    from ._opener import Opener
    from ._paste import Readable
    from ._session_store import SessionStore, Storage
    from .results import AuthMethodsResult, AuthorizeUrlResult
    from .redirects import AsyncRedirectListener, RedirectListener
    from .session import PortalSession

    T = TypeVar("T")
    SignedIn = AuthenticatedResult | TotpRequiredResult

DEFAULT_API_HOST = "api.portalhq.io"
_client_keys = itertools.count(1)
_STORAGE_ACCEPTED = 'None (the desktop keyring), "memory", "file", or a SessionStore (an object with get, set and delete)'


def _milliseconds(seconds: float | None, name: str) -> int:
    """A timeout in seconds as the C ABI's int32 of milliseconds, whose meaning the library
    decides (zero or less: its default); None is 0. Only what no int32 of milliseconds can
    hold is refused."""
    if seconds is None:
        return 0
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InvalidArgument(name)
    try:
        milliseconds = -int(-(seconds * 1000) // 1)  # rounded up (math.ceil, without importing math)
    except (OverflowError, ValueError):  # too large for a float, or not a number
        raise InvalidArgument(name) from None
    if not -0x80000000 <= milliseconds <= 0x7FFFFFFF:
        raise InvalidArgument(name)
    return milliseconds


def _is_store(candidate: object) -> TypeGuard[SessionStore]:
    """Whether `candidate` has the methods of a SessionStore."""
    return all(callable(getattr(candidate, name, None)) for name in ("get", "set", "delete"))


def _storage_kind(storage: object, options: _native.Options) -> None:
    """Sets the options' storage from the `storage` argument, or raises InvalidArgument
    naming what is accepted. (A store is registered anew each time: a forked child's client
    registers it for its own handle.)"""
    if storage is None:
        options.storage = _native.STORAGE_KEYRING
    elif isinstance(storage, str):
        kinds = {"memory": _native.STORAGE_MEMORY, "file": _native.STORAGE_FILE}
        if storage not in kinds:
            raise InvalidArgument("storage", f"Invalid argument: storage is {storage!r}; it takes {_STORAGE_ACCEPTED}.")
        options.storage = kinds[storage]
    elif _is_store(storage):
        from . import _storage  # its C callbacks, made for the first store

        options.storage = _native.STORAGE_HOST
        options.host_storage = ctypes.pointer(_storage.callbacks(storage))
    else:
        raise InvalidArgument(
            "storage", f"Invalid argument: storage is a {type(storage).__name__}; it takes {_STORAGE_ACCEPTED}."
        )


def _awaiting(start: _calls.Start[T]) -> Coroutine[Any, Any, T]:
    global _awaiting
    from ._awaited import awaiting  # asyncio's cost, paid by the first awaited call only

    _awaiting = awaiting  # the next calls go straight there: `from . import` runs Python code
    return awaiting(start)


class _Client:
    """What both clients share: the handle, its lifetime, and the declaration of every call."""

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
        keyring_prompt_timeout: float | None = None,
        file_storage_path: str | None = None,
        ca_file: str | os.PathLike[str] | None = None,
    ) -> None:
        """A client of the auth environment `auth_environment_id`, checked at once (no
        network or keyring I/O).

        - `redirect_url`: where Portal sends the user back (your URL scheme, or a loopback
          URL with its port for the browser sign-ins).
        - `api_host`: Portal's API host, or a base URL such as `http://127.0.0.1:8787`.
        - `magic_link`: the sender and template of send_magic_link; None: no magic links.
        - `is_account_abstracted`: sent to Portal when not None.
        - `storage`: where the session is kept: None (the desktop keyring; inside a
          Flatpak sandbox, the app's file keyring under the Secret portal's key), "memory"
          (this process only), "file" (a plain file, not encrypted: see
          `file_storage_path`), or a SessionStore of your own.
        - `connect_timeout`, `request_timeout`: seconds for a connection to open and for
          a whole request; None, zero or less: the library's 10 s and 30 s.
        - `application_id`: with the keyring, your app's reverse-DNS name (as its desktop
          file's), which keeps its item apart from other apps' of the same environment;
          None: the item is shared by every program of the environment that names none
          (inside a Flatpak sandbox, None is its FLATPAK_ID).
        - `keyring_prompt_timeout`: with the keyring, seconds to wait for the user to answer
          the keyring's dialog (an unlock, KeePassXC's access confirmation); None, zero or
          less: never show one (the call fails with KEYRING_NEEDS_CONFIRMATION, or
          KEYRING_LOCKED for an unlock).
        - `file_storage_path`: with storage="file", the folder of the session files (an
          absolute path, the user's alone); None: $XDG_STATE_HOME/portal-auth, by default
          ~/.local/state/portal-auth. The file is not encrypted.
        - `ca_file`: a PEM file of the certificate authorities to trust in place of the
          system's (a company's own CA); None: $CURL_CA_BUNDLE, else $SSL_CERT_FILE and
          $SSL_CERT_DIR, else the system's. The environment (and its proxy variables) is read
          now; docs/network.md has the order.

        Raises InvalidArgument naming the first unusable argument."""
        self._lock = _thread.allocate_lock()
        self._handle: int | None = None
        self._magic_link = magic_link
        # Tags this client's browser sign-ins, which close() ends (each holds a port).
        self._sign_ins = object()
        # Names the client in _open, which exit frees.
        self._key = next(_client_keys)
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
        options.is_account_abstracted = {None: _native.UNSET, True: _native.YES, False: _native.NO}[is_account_abstracted]
        options.connect_timeout_ms = _milliseconds(connect_timeout, "connect_timeout")
        options.request_timeout_ms = _milliseconds(request_timeout, "request_timeout")
        options.keyring_prompt_timeout_ms = _milliseconds(keyring_prompt_timeout, "keyring_prompt_timeout")
        # How long exit waits at most for an exchange of this client (the library's timeout).
        timeout_ms = options.request_timeout_ms if options.request_timeout_ms > 0 else _native.DEFAULT_REQUEST_TIMEOUT_MS
        self._timeout = timeout_ms / 1000
        _storage_kind(storage, options)
        if application_id is not None:
            options.application_id = _native.c_text(application_id, "application_id")
        if file_storage_path is not None:
            options.file_storage_path = _native.c_text(file_storage_path, "file_storage_path")
        if ca_file is not None:
            path = os.fspath(ca_file) if isinstance(ca_file, os.PathLike) else ca_file
            options.ca_file = _native.c_text(path, "ca_file")
        # What names the redirect channel, for forward_redirect (which needs no storage).
        self._channel = (options.auth_environment_id, options.redirect_url, options.api_host, options.application_id)
        # What a forked child's handle is made from (_adopt): the options (and the bytes they
        # keep alive), the store, and the settings made since.
        self._options, self._storage = options, storage
        # The opener installed now (an _opener.Installed), or None for the library's default.
        self._opener: Any = None
        self._ephemeral = False
        self._generation = _threads.generation
        self._handle = _new_handle(options)
        with _open_lock:
            _open[self._key] = self._handle

    def _close(self) -> None:
        """Frees the handle (once): from close(), when the client is collected, or at exit.
        Calls in flight still complete."""
        if self._generation != _threads.generation:
            # The handle is the parent's (its free frees nothing here); the lock is new, since
            # a thread of the parent may have held the old one.
            with _adopting:
                self._lock = _thread.allocate_lock()
                self._generation = _threads.generation
        with self._lock:
            self._handle = None
            self._storage = None  # the library lets go of it when done; a closed client adopts no handle
            _free(self._key)
        _calls.cancel_group(self._sign_ins)

    def __del__(self) -> None:
        """Frees the handle of a client collected unclosed."""
        if getattr(self, "_handle", None) is not None:
            _free(self._key)

    def _with_handle(self, use: Callable[..., Any], *arguments: Any) -> int:
        """Calls `use(handle, *arguments)` under the lock: close() cannot free the handle while
        a call starts on it, or a setter runs."""
        if self._generation != _threads.generation:
            self._adopt()
        with self._lock:
            if self._handle is None:
                raise PortalAuthError("This portal_auth client is closed.")
            return int(use(self._handle, *arguments))

    def _adopt(self) -> None:
        """In a child of os.fork(): the handle made before the fork is the parent's, which the
        library refuses there (docs/desktop.md "fork()"). The child's client gets a handle of
        its own, made from the same options, with the same opener and ephemeral flag; its lock
        is new, since a thread of the parent may have held the old one."""
        with _adopting:
            if self._generation == _threads.generation:
                return
            self._lock = _thread.allocate_lock()
            if self._handle is not None:
                if self._storage is not None and not isinstance(self._storage, str):
                    _storage_kind(self._storage, self._options)
                handle = _new_handle(self._options)
                lib = _native.lib()
                if self._opener is not None:
                    from . import _opener

                    lib.portal_auth_set_browser_opener(handle, _opener.OPEN, self._opener.key)
                lib.portal_auth_set_prefers_ephemeral_web_browser_session(handle, int(self._ephemeral))
                self._handle = handle
                with _open_lock:
                    _open[self._key] = handle
            self._generation = _threads.generation

    def _set_browser_opener(self, opener: Opener | None) -> None:
        if opener is not None and not callable(opener):
            raise InvalidArgument("opener")
        from . import _opener  # its C function, made for the first opener

        lib = _native.lib()

        def install(handle: int) -> int:
            installed = None if opener is None else _opener.install(opener)
            pointer, key = (_opener.NONE, 0) if installed is None else (_opener.OPEN, installed.key)
            code = int(lib.portal_auth_set_browser_opener(handle, pointer, key))
            if code == _native.OK:
                self._opener = installed
            return code

        code = self._with_handle(install)
        if code != _native.OK:
            raise from_code(code, "opener")

    @property
    def prefers_ephemeral_web_browser_session(self) -> bool:
        """Passed to the browser opener as `ephemeral`: True asks for a private browser
        window. False by default."""
        lib = _native.lib()
        return self._with_handle(lib.portal_auth_prefers_ephemeral_web_browser_session) == _native.TRUE

    @prefers_ephemeral_web_browser_session.setter
    def prefers_ephemeral_web_browser_session(self, prefers: bool) -> None:
        if not isinstance(prefers, bool):
            raise InvalidArgument("prefers_ephemeral_web_browser_session")
        lib = _native.lib()
        code = self._with_handle(lib.portal_auth_set_prefers_ephemeral_web_browser_session, int(prefers))
        if code != _native.OK:
            raise from_code(code, "prefers_ephemeral_web_browser_session")
        self._ephemeral = prefers

    def _call(
        self, callback: _calls.Callback[T], function: str, *arguments: Any, persists: bool = False, sign_in: bool = False,
        opens: bool = False,
    ) -> _calls.Start[T]:
        """The call portal_auth_<function>(client, *arguments, callback, user_data, &call).
        `persists`: an exchange (exit waits for it); `sign_in`: a one-call sign-in, which
        close() ends and a cancelled waiter sees end; `opens`: a browser sign-in, which keeps
        the opener installed as it is called (the one the library calls) until it ends."""
        native = getattr(_native.lib(), function)
        keeps: list[Any] = []  # not the Start itself: the starter would make a cycle of it

        def call(handle: int, *rest: Any) -> int:
            # Under the client's lock: no other opener is installed between these two.
            if opens and self._opener is not None:
                from . import _opener

                _opener.take_failure(self._opener)  # one left by an earlier sign-in is not this one's
                keeps.append(self._opener)
            return int(native(handle, *rest))

        def start(pointer: Any, key: int, out_call: ctypes.c_void_p) -> int:
            return self._with_handle(call, *arguments, pointer, key, ctypes.byref(out_call))

        return _calls.Start(
            callback, start, persists=persists, settle_on_cancel=sign_in,
            group=self._sign_ins if sign_in else None, timeout=self._timeout, keeps=keeps,
        )

    # The calls, one declaration each.

    def _get_methods(self) -> _calls.Start[AuthMethodsResult]:
        return self._call(_outcomes.METHODS, "portal_auth_get_methods")

    def _send_magic_link(self, email: str) -> _calls.Start[None]:
        if self._magic_link is None:  # docs/protocol.md §3: checked before the email
            raise MagicLinkNotConfigured()
        return self._call(_calls.DONE, "portal_auth_send_magic_link", _native.c_text(email, "email"))

    def _login_with(self, provider: str) -> _calls.Start[AuthorizeUrlResult]:
        return self._call(_outcomes.URL, f"portal_auth_login_with_{provider}")

    def _handle_redirect(self, url: str) -> _calls.Start[SignedIn | None]:
        return self._call(_outcomes.RESULT, "portal_auth_handle_redirect", _native.c_text(url, "url"), persists=True)

    def _verify_totp(self, code: str, user_jwt: str) -> _calls.Start[SignedIn | None]:
        code_text, jwt = _native.c_text(code, "code"), _native.c_text(user_jwt, "user_jwt")
        return self._call(_outcomes.RESULT, "portal_auth_verify_totp", code_text, jwt, persists=True)

    def _restore_session(self) -> _calls.Start[PortalSession | None]:
        return self._call(_outcomes.SESSION, "portal_auth_restore_session")

    def _clear_persisted_session(self) -> _calls.Start[None]:
        return self._call(_calls.DONE, "portal_auth_clear_persisted_session")

    def _sign_in(self, provider: str, timeout: float | None) -> _calls.Start[SignedIn | None]:
        milliseconds = _milliseconds(timeout, "timeout")
        return self._call(
            _outcomes.RESULT, f"portal_auth_sign_in_with_{provider}", milliseconds, persists=True, sign_in=True,
            opens=True,
        )

    def _sign_in_with_magic_link(self, email: str, timeout: float | None) -> _calls.Start[SignedIn | None]:
        address, milliseconds = _native.c_text(email, "email"), _milliseconds(timeout, "timeout")
        return self._call(
            _outcomes.RESULT, "portal_auth_sign_in_with_magic_link", address, milliseconds, persists=True, sign_in=True
        )

    @staticmethod
    def _keep_opener_cause(error: SignInUnavailable, started: _calls.Start[Any]) -> None:
        """Makes what the sign-in's opener raised the __cause__ of its error."""
        if not started.keeps:
            return
        from . import _opener

        cause = _opener.take_failure(started.keeps[0])
        if cause is not None and error.reason == _native.REASON_OPENER_FAILED:
            error.__cause__ = cause

    def _listen_for_redirects(self) -> _calls.Stream:
        return _calls.start_stream(self._call(_outcomes.REDIRECTS, "portal_auth_listen_for_redirects"))

    def _forward_redirect(self, url: str) -> _calls.Start[RedirectForwarding]:
        address = _native.c_text(url, "url")
        lib = _native.lib()
        options = _native.Options()
        lib.portal_auth_options_init(ctypes.byref(options), ctypes.sizeof(options))
        (options.auth_environment_id, options.redirect_url, options.api_host, options.application_id) = self._channel
        options.storage = _native.STORAGE_MEMORY

        def forward(handle: int, pointer: Any, key: int) -> int:  # the handle: only that it is open
            return int(lib.portal_auth_forward_redirect(ctypes.byref(options), address, pointer, key))

        def start(pointer: Any, key: int, out_call: ctypes.c_void_p) -> int:
            return self._with_handle(forward, pointer, key)

        return _calls.Start(_outcomes.FORWARDED, start, timeout=self._timeout)


def _new_handle(options: _native.Options) -> int:
    """A new portal_auth handle from `options`, its calls completing on the threads that wait
    for them (_calls), never on the library's."""
    lib = _native.lib()
    client = ctypes.c_void_p()
    error = ctypes.c_void_p()
    raise_from_out(lib.portal_auth_new(ctypes.byref(options), ctypes.byref(client), ctypes.byref(error)), error)
    if lib.portal_auth_set_completion_queue(client.value, _native.TRUE) != _native.OK:
        lib.portal_auth_free(client.value)
        raise PortalAuthError("portal-auth has no file descriptor left for its completion queue.")
    return client.value or 0


# The handles of the clients not freed yet, by their keys: exit frees them, after the
# calls in flight are settled, so that the library lets a host store go while Python runs.
# In a forked child the parent's stay listed: their frees free nothing there.
_open: dict[int, int | None] = {}
_open_lock = _thread.allocate_lock()
_adopting = _thread.allocate_lock()


def _forked() -> None:
    global _open_lock, _adopting
    _open_lock, _adopting = _thread.allocate_lock(), _thread.allocate_lock()


_threads.after_fork(_forked)


def _free(client_key: int) -> None:
    with _open_lock:
        if client_key not in _open:
            return
        handle = _open.pop(client_key)
    _native.lib().portal_auth_free(handle)


def _free_all() -> None:
    with _open_lock:
        keys = list(_open)
    for key in keys:
        _free(key)


_threads.at_exit(_free_all)


def _authenticated(result: SignedIn | None) -> AuthenticatedResult:
    if not isinstance(result, AuthenticatedResult):
        raise PortalAuthError("verify_totp did not return a session.")
    return result


def _signed_in(result: SignedIn | None) -> SignedIn:
    if result is None:
        raise PortalAuthError("The sign-in returned no result.")
    return result


class PortalAuth(_Client):
    """Portal's Client Auth, blocking: each call returns when it is done. Safe to use from
    several threads. Ctrl-C during a call cancels it (a request already on the wire still
    completes in the library, and a sign-in's session is persisted: docs/protocol.md §5) and
    propagates. Also a context manager, which closes the client."""

    def get_methods(self) -> AuthMethodsResult:
        """The sign-in methods the environment has enabled, fetched from Portal."""
        return _calls.blocking(self._get_methods())

    def send_magic_link(self, email: str) -> None:
        """Emails `email` (trimmed and lowercased) a sign-in link; the redirect it leads to
        completes with handle_redirect. Raises MagicLinkNotConfigured without the client's
        `magic_link`, InvalidArgument("email") for a blank address, RateLimited when Portal
        sends no more now."""
        _calls.blocking(self._send_magic_link(email))

    def login_with_google(self) -> AuthorizeUrlResult:
        """A fresh, single-use Google authorize URL, for an app that opens the browser and
        receives the redirect itself (then handle_redirect). Raises AuthMethodUnavailable
        when the environment has no Google sign-in."""
        return _calls.blocking(self._login_with("google"))

    def login_with_apple(self) -> AuthorizeUrlResult:
        """A fresh, single-use Apple authorize URL; as login_with_google."""
        return _calls.blocking(self._login_with("apple"))

    def handle_redirect(self, url: str) -> AuthenticatedResult | TotpRequiredResult | None:
        """Completes a sign-in from the redirect URL the app received (a magic link's, a
        provider's): exchanges its grant, persists the session, and returns it, or the TOTP
        step that remains. None when `url` is not a sign-in redirect of this client (nothing
        is sent). The same redirect handled again returns the same result, with no request.
        Raises AuthenticationFailed when the redirect carries an error."""
        return _calls.blocking(self._handle_redirect(url))

    def verify_totp(self, code: str, user_jwt: str) -> AuthenticatedResult:
        """Submits the user's TOTP `code` (sent verbatim) for the step whose userJwt is
        `user_jwt`; returns the session, already persisted. A wrong code raises
        Unauthorized with reason TOTP_CODE_REJECTED: ask again, for the same step (its other
        reasons say to sign in again)."""
        return _authenticated(_calls.blocking(self._verify_totp(code, user_jwt)))

    def restore_session(self) -> PortalSession | None:
        """The session persisted by an earlier sign-in, or None (no network). A stored
        value that does not decode is deleted and reads as None; a store that cannot be
        read now raises SessionStorageFailure and is left alone."""
        return _calls.blocking(self._restore_session())

    def clear_persisted_session(self) -> None:
        """Deletes the persisted session (once an exchange in flight has persisted its own)
        and forgets the last grant; Portal has no server-side sign-out."""
        _calls.blocking(self._clear_persisted_session())

    def sign_in_with_google(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """Signs in with Google in the user's browser and waits for it to come back to the
        loopback redirect URL (`http://127.0.0.1:<port>/<path>`): `timeout` seconds; None,
        zero or less wait the library's default, 300 s. Raises SignInInProgress,
        SignInUnavailable, SignInClosed (timeout, Ctrl-C) or SignInCallbackIncomplete, or
        what handle_redirect raises."""
        started = self._sign_in("google", timeout)
        try:
            return _signed_in(_calls.blocking(started))
        except SignInUnavailable as error:
            self._keep_opener_cause(error, started)
            raise

    def sign_in_with_apple(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """Signs in with Apple in the user's browser; as sign_in_with_google."""
        started = self._sign_in("apple", timeout)
        try:
            return _signed_in(_calls.blocking(started))
        except SignInUnavailable as error:
            self._keep_opener_cause(error, started)
            raise

    def sign_in_with_magic_link(
        self, email: str, timeout: float | None = None, *, paste_from: int | Readable | None = None
    ) -> AuthenticatedResult | TotpRequiredResult:
        """Signs in by magic link with no URL to paste: emails the link with the loopback
        redirect URL (`http://127.0.0.1:<port>/<path>`) and waits for the browser the user opens
        it in to bring it back: `timeout` seconds; None, zero or less wait the library's
        default, 900 s. The browser's tab then says the sign-in is done. handle_redirect with
        the link meanwhile (pasted, or forwarded) completes it too, with that outcome. One
        sign-in at a time, shared with sign_in_with_google/apple. Raises SignInInProgress,
        MagicLinkNotConfigured, InvalidArgument("email"), SignInUnavailable (not a loopback
        redirect URL, a port in use: no email sent), what send_magic_link raises,
        SignInClosed (timeout, Ctrl-C, close()), or what handle_redirect raises.

        `paste_from` (a terminal: sys.stdin, or a descriptor) also takes the link pasted
        there, line by line, whichever comes first: over SSH the link's redirect reaches the
        laptop the email is opened on, not this machine. A line that is not a sign-in link
        of this client gets one line on stderr and the wait goes on. With a redirect URL
        that is not loopback the link is emailed and only a paste completes (EOFError when
        the terminal closes first). The terminal is read only during the call."""
        if paste_from is None:
            return _signed_in(_calls.blocking(self._sign_in_with_magic_link(email, timeout)))
        from . import _paste

        outcome = _paste.sign_in(
            wait=lambda: _calls.blocking(self._sign_in_with_magic_link(email, timeout)),
            handle=lambda url: _calls.blocking(self._handle_redirect(url)),
            send=lambda: _calls.blocking(self._send_magic_link(email)),
            cancel=lambda: _calls.cancel_group(self._sign_ins),
            paste_from=paste_from,
        )
        return _signed_in(outcome)

    def listen_for_redirects(self) -> RedirectListener:
        """In the running app: listens for the redirects its next instances forward
        (forward_redirect) on the channel of this user, application_id and environment, from
        the moment this returns. Iterate the listener for each one's outcome, handled as
        handle_redirect would (a forwarded magic link also completes a waiting
        sign_in_with_magic_link); close it, or the client, to stop."""
        from .redirects import RedirectListener

        return RedirectListener(self._listen_for_redirects())

    def forward_redirect(self, url: str) -> RedirectForwarding:
        """In the URL handler the desktop started: hands `url` to the app's running instance
        (the one listening with listen_for_redirects, same application_id and environment).
        TAKEN: nothing more to do; NO_INSTANCE: handle it here (handle_redirect); REFUSED: not
        a redirect of this client. No request to Portal, no keyring. Raises
        SignInUnavailable for an unsafe or missing runtime folder, or an instance that did
        not answer in time (it may still handle the URL)."""
        return _calls.blocking(self._forward_redirect(url))

    def set_browser_opener(self, opener: Opener | None) -> None:
        """Opens the browser for sign_in_with_google/apple: `opener(url, ephemeral)`, called
        on a thread the library starts for each sign-in (it may block, and may call this
        client and wait), returns once the browser is launched. False (as webbrowser.open
        returns when it finds no browser) fails the sign-in at once with SignInUnavailable,
        reason NO_BROWSER, whose `url` the app can show; an exception fails it with reason
        OPENER_FAILED and the exception as its __cause__. None restores the default
        ($BROWSER, else xdg-open)."""
        self._set_browser_opener(opener)

    def close(self) -> None:
        """Frees the client. Calls in flight still complete, but a browser sign-in ends as
        SignInClosed (its listener closes); new calls raise PortalAuthError."""
        self._close()

    def __enter__(self) -> PortalAuth:
        """The client itself."""
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Closes the client."""
        self.close()


class AsyncPortalAuth(_Client):
    """Portal's Client Auth for asyncio: the calls of PortalAuth as coroutines. Completions
    run on the awaiting loop's thread (it watches the library's completion queue); cancelling
    an awaiting task cancels its call (a request already sent still completes and persists
    its session: docs/protocol.md §5). Also an async context manager, which closes it."""

    async def get_methods(self) -> AuthMethodsResult:
        """As PortalAuth.get_methods."""
        return await _awaiting(self._get_methods())

    async def send_magic_link(self, email: str) -> None:
        """As PortalAuth.send_magic_link."""
        await _awaiting(self._send_magic_link(email))

    async def login_with_google(self) -> AuthorizeUrlResult:
        """As PortalAuth.login_with_google."""
        return await _awaiting(self._login_with("google"))

    async def login_with_apple(self) -> AuthorizeUrlResult:
        """As PortalAuth.login_with_apple."""
        return await _awaiting(self._login_with("apple"))

    async def handle_redirect(self, url: str) -> AuthenticatedResult | TotpRequiredResult | None:
        """As PortalAuth.handle_redirect. Cancelling the task once the grant is on the wire
        does not lose the session: the exchange completes and persists it, and the same
        redirect handled again returns it."""
        return await _awaiting(self._handle_redirect(url))

    async def verify_totp(self, code: str, user_jwt: str) -> AuthenticatedResult:
        """As PortalAuth.verify_totp."""
        return _authenticated(await _awaiting(self._verify_totp(code, user_jwt)))

    async def restore_session(self) -> PortalSession | None:
        """As PortalAuth.restore_session."""
        return await _awaiting(self._restore_session())

    async def clear_persisted_session(self) -> None:
        """As PortalAuth.clear_persisted_session."""
        await _awaiting(self._clear_persisted_session())

    async def sign_in_with_google(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """As PortalAuth.sign_in_with_google. Cancelling the awaiting task ends the wait
        (nothing is exchanged); CancelledError comes once the listener is closed and the
        next sign-in may start."""
        started = self._sign_in("google", timeout)
        try:
            return _signed_in(await _awaiting(started))
        except SignInUnavailable as error:
            self._keep_opener_cause(error, started)
            raise

    async def sign_in_with_apple(self, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """As PortalAuth.sign_in_with_google, with Apple."""
        started = self._sign_in("apple", timeout)
        try:
            return _signed_in(await _awaiting(started))
        except SignInUnavailable as error:
            self._keep_opener_cause(error, started)
            raise

    async def sign_in_with_magic_link(self, email: str, timeout: float | None = None) -> AuthenticatedResult | TotpRequiredResult:
        """As PortalAuth.sign_in_with_magic_link. Cancelling the awaiting task ends the wait
        (nothing is exchanged); CancelledError comes once the listener is closed."""
        return _signed_in(await _awaiting(self._sign_in_with_magic_link(email, timeout)))

    def listen_for_redirects(self) -> AsyncRedirectListener:
        """As PortalAuth.listen_for_redirects: `async for` each forwarded redirect's outcome."""
        from .redirects import AsyncRedirectListener

        return AsyncRedirectListener(self._listen_for_redirects())

    async def forward_redirect(self, url: str) -> RedirectForwarding:
        """As PortalAuth.forward_redirect."""
        return await _awaiting(self._forward_redirect(url))

    def set_browser_opener(self, opener: Opener | None) -> Awaitable[None]:
        """As PortalAuth.set_browser_opener (the opener is a plain function here too); it
        takes effect at once, and awaiting it is optional."""
        self._set_browser_opener(opener)
        return _calls.Ready()

    def close(self) -> Awaitable[None]:
        """Frees the client at once (calls in flight still complete); awaiting it is optional."""
        self._close()
        return _calls.Ready()

    async def __aenter__(self) -> AsyncPortalAuth:
        """The client itself."""
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Closes the client."""
        self._close()
