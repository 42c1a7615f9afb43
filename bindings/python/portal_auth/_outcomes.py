"""The completion callbacks of the client's calls: each reads the borrowed C values of its
callback into the result types."""

from __future__ import annotations

from . import _calls, _error_handles, _native
from .results import AuthenticatedResult, AuthMethodsResult, AuthorizeUrlResult, TotpRequiredResult
from .session import PortalSession

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._auth_method import AuthMethod

# The methods by their C names, made by the first get_methods (with the enum): a lookup,
# where calling the enum would cost a few times more.
_METHODS: dict[bytes, AuthMethod] = {}


def _method(name: bytes | None) -> AuthMethod:
    if not _METHODS:
        from ._auth_method import AuthMethod

        _METHODS.update({method.value.encode(): method for method in AuthMethod})
    known = _METHODS.get(name or b"")
    if known is None:
        from ._auth_method import AuthMethod

        return AuthMethod(_native.required_text(name))
    return known


def _methods(methods: int | None, error: int | None) -> AuthMethodsResult:
    _error_handles.check(error)
    lib = _native.lib()
    count = int(lib.portal_auth_methods_count(methods))
    return AuthMethodsResult(
        allowed_auth_methods=[_method(lib.portal_auth_methods_at(methods, index)) for index in range(count)],
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
        )
    abstracted = int(lib.portal_auth_result_is_account_abstracted(result))
    return AuthenticatedResult(
        session=PortalSession._of(int(lib.portal_auth_result_session(result))),
        client_id=_native.text(lib.portal_auth_result_client_id(result)),
        is_account_abstracted=None if abstracted == _native.UNSET else bool(abstracted),
    )


def _session(session: int | None, error: int | None) -> PortalSession | None:
    _error_handles.check(error)
    return PortalSession._of(session) if session else None


METHODS = _calls.Callback(_native.METHODS_FN, _methods)
URL = _calls.Callback(_native.URL_FN, _authorize_url)
RESULT = _calls.Callback(_native.RESULT_FN, _result)
SESSION = _calls.Callback(_native.SESSION_FN, _session)
