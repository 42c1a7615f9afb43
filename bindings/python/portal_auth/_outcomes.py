"""The completion callbacks of the client's calls: each reads the borrowed C values of its
callback into the result types."""

from __future__ import annotations

from . import _calls, _error_handles, _native
from .errors import PortalAuthError, SignInClosed
from .results import AuthenticatedResult, AuthMethodsResult, AuthorizeUrlResult, TotpRequiredResult
from .session import PortalSession

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._auth_method import AuthMethod
    from ._forwarding import RedirectForwarding

# The methods by their C names, made by the first get_methods (with the enum): a lookup,
# where calling the enum would cost a few times more.
_METHODS: dict[bytes | None, AuthMethod] = {}


def _method(name: bytes | None) -> AuthMethod:
    """A method the lookup does not know: the enum's, or the ValueError of a name it lacks."""
    from ._auth_method import AuthMethod

    if not _METHODS:
        _METHODS.update({method.value.encode(): method for method in AuthMethod})
        known = _METHODS.get(name)
        if known is not None:
            return known
    return AuthMethod(_native.required_text(name))


def _methods(methods: int | None, error: int | None) -> AuthMethodsResult:
    _error_handles.check(error)
    lib = _native.lib()
    at, known = lib.portal_auth_methods_at, _METHODS.get
    names = [at(methods, index) for index in range(lib.portal_auth_methods_count(methods))]
    return AuthMethodsResult(
        allowed_auth_methods=[known(name) or _method(name) for name in names],
        auto_create_wallet=bool(lib.portal_auth_methods_auto_create_wallet(methods)),
    )


def _authorize_url(url: bytes | None, error: int | None) -> AuthorizeUrlResult:
    _error_handles.check(error)
    return AuthorizeUrlResult(authorize_url=_native.required_text(url))


def _result(result: int | None, error: int | None) -> AuthenticatedResult | TotpRequiredResult | None:
    _error_handles.check(error)
    if not result:
        return None
    lib = _native.lib()
    if int(lib.portal_auth_result_kind(result)) == _native.RESULT_TOTP_REQUIRED:
        return TotpRequiredResult(
            user_jwt=_native.required_text(lib.portal_auth_result_user_jwt(result)),
            totp_link=_native.text(lib.portal_auth_result_totp_link(result)),
            end_user_id=_native.required_text(lib.portal_auth_result_end_user_id(result)),
            expires_at=int(lib.portal_auth_result_totp_expires_at(result)) or None,
        )
    abstracted = int(lib.portal_auth_result_is_account_abstracted(result))
    return AuthenticatedResult(
        session=PortalSession._of(int(lib.portal_auth_result_session(result))),
        client_id=_native.text(lib.portal_auth_result_client_id(result)),
        is_account_abstracted={_native.YES: True, _native.NO: False}.get(abstracted),
    )


def _session(session: int | None, error: int | None) -> PortalSession | None:
    _error_handles.check(error)
    return PortalSession._of(session) if session else None


def _redirect(result: int | None, error: int | None, last: int) -> tuple[bool, object]:
    """One call of portal_auth_listen_for_redirects: (False, a forwarded redirect's outcome),
    an error of one redirect being an outcome too, not the end; or (True, the end): None when
    listening was closed, else the error that stopped it."""
    if not last:
        try:
            return False, _result(result, error)
        except PortalAuthError as failure:
            return False, failure
    try:
        _error_handles.check(error)
    except SignInClosed:
        return True, None
    except PortalAuthError as failure:
        return True, failure
    return True, None


def _forwarded(outcome: int, error: int | None) -> RedirectForwarding:
    _error_handles.check(error)
    from ._forwarding import RedirectForwarding

    return RedirectForwarding(outcome)


METHODS = _calls.Callback(_native.METHODS_FN, _methods)
REDIRECTS = _calls.StreamCallback(_native.REDIRECT_FN, _redirect)
FORWARDED = _calls.Callback(_native.FORWARD_FN, _forwarded)
URL = _calls.Callback(_native.URL_FN, _authorize_url)
RESULT = _calls.Callback(_native.RESULT_FN, _result)
SESSION = _calls.Callback(_native.SESSION_FN, _session)
