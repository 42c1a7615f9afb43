"""Listening for the redirects an app's next instances forward (forward_redirect): a blocking
iterator on PortalAuth, an async iterator on AsyncPortalAuth.

Why iterators: each client already completes its calls on the thread (or loop) that waits
for them, so a stream of outcomes is consumed the same way, with no thread of the binding's
own and no callback entering Python elsewhere. An error of one forwarded redirect does not
end listening, so it is yielded as a value (as asyncio.gather(return_exceptions=True) does);
the iteration ends when listening does (close, or the client's close), and a failure to
listen at all is raised."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from types import TracebackType
from typing import Union

from . import _calls
from .errors import PortalAuthError
from .results import AuthenticatedResult, TotpRequiredResult

Redirect = Union[AuthenticatedResult, TotpRequiredResult, PortalAuthError, None]
"""What a forwarded redirect came to: the sign-in's result, None for a URL that is not a
sign-in redirect, or the error handle_redirect would have raised."""


class _Listening:
    """What both listeners share: the stream of one portal_auth_listen_for_redirects call."""

    __slots__ = ("_stream",)

    def __init__(self, stream: object) -> None:
        """Made by the clients' listen_for_redirects. The stream is typed `object` here so
        that the binding's internals stay out of the public types."""
        if not isinstance(stream, _calls.Stream):
            raise TypeError("a listener is made by listen_for_redirects()")
        self._stream: _calls.Stream = stream

    def _ended(self) -> None:
        """Raises the error that stopped listening, once; then nothing."""
        error, self._stream.error = self._stream.error, None
        if error is not None:
            raise error

    def _close(self) -> None:
        self._stream.cancel()


class RedirectListener(_Listening):
    """PortalAuth.listen_for_redirects(): iterate for the outcome of each forwarded redirect,
    in order; blocks until the next comes. Ends when closed (close(), or the client's close());
    raises SignInUnavailable when it cannot listen (another instance listens, an unsafe or
    missing runtime folder)."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Redirect]:
        return self

    def __next__(self) -> Redirect:
        ready, outcome = _calls.next_outcome(self._stream)
        if ready:
            redirect: Redirect = outcome
            return redirect
        self._ended()
        raise StopIteration

    def close(self) -> None:
        """Stops listening: the iteration ends (redirects already taken come first)."""
        self._close()

    def __enter__(self) -> RedirectListener:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class AsyncRedirectListener(_Listening):
    """AsyncPortalAuth.listen_for_redirects(): `async for` the outcome of each forwarded
    redirect; as RedirectListener."""

    __slots__ = ()

    def __aiter__(self) -> AsyncIterator[Redirect]:
        return self

    async def __anext__(self) -> Redirect:
        from . import _awaited  # imports asyncio, as every awaited call

        ready, outcome = await _awaited.next_outcome(self._stream)
        if ready:
            redirect: Redirect = outcome
            return redirect
        self._ended()
        raise StopAsyncIteration

    def close(self) -> Awaitable[None]:
        """Stops listening at once (awaiting it is optional): the iteration ends."""
        self._close()
        return _calls.Ready()

    async def __aenter__(self) -> AsyncRedirectListener:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._close()
