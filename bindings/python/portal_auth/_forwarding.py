"""What became of a redirect handed to the running instance (forward_redirect): the C ABI's
stable PORTAL_AUTH_FORWARD_* numbers, as an enum. A leaf of the package (it imports nothing
of it), loaded by the first forward."""

from __future__ import annotations

import enum


class RedirectForwarding(enum.IntEnum):
    """What became of a redirect forward_redirect handed on. The values are the C ABI's
    PORTAL_AUTH_FORWARD_* numbers."""

    TAKEN = 1
    """The running instance took it and completes the sign-in: nothing more to do here."""
    NO_INSTANCE = 2
    """No instance listens: handle the URL here (handle_redirect)."""
    REFUSED = 3
    """Not a redirect of this client (checked here, or by the running instance): nothing was
    handed over, and handle_redirect would return None for it."""
