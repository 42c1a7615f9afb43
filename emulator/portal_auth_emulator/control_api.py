"""Test-only endpoints under /_emulator/ (not Portal's; no header requirements)."""

from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qs

from . import totp
from .config import ConfigError, parse_environment
from .faults import FaultQueue, parse_fault
from .loopback_ports import LoopbackPorts
from .messages import (
    ApiError,
    Request,
    Response,
    error_response,
    html_response,
    json_response,
    parse_json_object,
)
from .providers import PROVIDERS, FakeProviders
from .recorder import RequestLog
from .state import GRANT_KINDS, OAUTH_OUTCOMES, State

DEFAULT_WAIT_SECONDS = 10.0
MAX_WAIT_SECONDS = 60.0
OK = {"ok": True}

Route = Callable[[Request], Response]
# What _number parses: `count` is an int, `timeout` a float.
_Number = TypeVar("_Number", int, float)


class ControlApi:
    """The /_emulator/ control endpoints a test drives the emulator with (emulator/README.md lists them)."""

    def __init__(self, state: State, log: RequestLog, faults: FaultQueue, providers: FakeProviders) -> None:
        self._state = state
        self._log = log
        self._faults = faults
        self._providers = providers
        # Pages a test has the browser load, e.g. a hostile page that aims at the app's listener.
        self._pages: dict[str, bytes] = {}
        # Not reset by POST reset: the next port stays the one after the last handed out.
        self._loopback_ports = LoopbackPorts()
        self._routes: dict[tuple[str, str], Route] = {
            ("GET", "/_emulator/outbox"): self._outbox,
            ("GET", "/_emulator/mail/open"): self._open_mail_link,
            ("GET", "/_emulator/requests"): self._requests,
            ("DELETE", "/_emulator/requests"): self._clear_requests,
            ("GET", "/_emulator/wait"): self._wait,
            ("GET", "/_emulator/faults"): self._list_faults,
            ("POST", "/_emulator/faults"): self._add_fault,
            ("DELETE", "/_emulator/faults"): self._clear_faults,
            ("POST", "/_emulator/release"): self._release,
            ("POST", "/_emulator/grants"): self._create_grant,
            ("POST", "/_emulator/reset"): self._reset,
            ("GET", "/_emulator/control"): self._get_control,
            ("POST", "/_emulator/control"): self._set_control,
            ("GET", "/_emulator/totp"): self._current_totp,
            ("GET", "/_emulator/sessions"): self._sessions,
            ("POST", "/_emulator/environments"): self._upsert_environment,
            ("POST", "/_emulator/pages"): self._add_page,
            ("GET", "/_emulator/pages"): self._page,
            ("GET", "/_emulator/loopback-port"): self._loopback_port,
        }
        for provider in PROVIDERS:
            self._routes[("GET", f"/_emulator/oauth/{provider}/authorize")] = self._authorize_with(provider)

    def handle(self, request: Request) -> Response:
        """The answer to a control request; 404 for a path that is not one."""
        route = self._routes.get((request.method, request.path))
        if route is None:
            return error_response(404, "not found")
        try:
            return route(request)
        except ApiError as exc:
            return error_response(exc.status, exc.message)

    def _authorize_with(self, provider: str) -> Route:
        return lambda request: self._providers.authorize(provider, request)

    # -- observation ------------------------------------------------------------

    def _outbox(self, request: Request) -> Response:
        query = _query(request)
        email = query.get("email")
        if "count" in query:
            # Waits for the email a client is sending, as a user waits for their mail.
            if email is None:
                raise ApiError(400, "count needs email")
            count = _number(query["count"], int, "count")
            timeout = _number(query.get("timeout", str(DEFAULT_WAIT_SECONDS)), float, "timeout")
            if count < 0 or timeout < 0:
                raise ApiError(400, "count and timeout must not be negative")
            if not self._state.wait_for_outbox(email, count, min(timeout, MAX_WAIT_SECONDS)):
                return json_response(408, {"messages": self._state.outbox(email)})
        return json_response(200, {"messages": self._state.outbox(email)})

    def _open_mail_link(self, request: Request) -> Response:
        """The email's link, followed as a user's click would: 302 to the redirect URL."""
        message = self._state.outbox_message(_query(request).get("id", ""))
        if message is None:
            return html_response(404, "No such email", "This link belongs to no email the emulator sent.")
        link = message["link"]
        return html_response(302, "Signing in", "Returning to the app.", [("Location", link)], link=link)

    def _requests(self, request: Request) -> Response:
        return json_response(200, {"requests": self._log.entries()})

    def _clear_requests(self, request: Request) -> Response:
        self._log.clear()
        return json_response(200, OK)

    def _wait(self, request: Request) -> Response:
        query = _query(request)
        path = query.get("path")
        if not path:
            raise ApiError(400, "path is required")
        count = _number(query.get("count", "1"), int, "count")
        timeout = _number(query.get("timeout", str(DEFAULT_WAIT_SECONDS)), float, "timeout")
        if count < 0 or timeout < 0:
            raise ApiError(400, "count and timeout must not be negative")
        reached, current = self._log.wait_for(path, count, min(timeout, MAX_WAIT_SECONDS))
        return json_response(200 if reached else 408, {"count": current})

    def _sessions(self, request: Request) -> Response:
        return json_response(200, {"sessions": self._state.sessions()})

    def _current_totp(self, request: Request) -> Response:
        # Lets a test that cannot compute RFC 6238 itself answer a TOTP step.
        query = _query(request)
        user = self._state.user_by_email(query.get("environmentId", ""), query.get("email", ""))
        if user is None or user.totp_secret is None:
            raise ApiError(404, "no enrolled user")
        return json_response(200, {"code": totp.totp(user.totp_secret, self._state.now())})

    # -- faults -------------------------------------------------------------------

    def _list_faults(self, request: Request) -> Response:
        return json_response(200, {"faults": self._faults.list()})

    def _add_fault(self, request: Request) -> Response:
        self._faults.add(parse_fault(parse_json_object(request.body)))
        return json_response(200, OK)

    def _clear_faults(self, request: Request) -> Response:
        self._faults.clear()
        return json_response(200, OK)

    def _release(self, request: Request) -> Response:
        return json_response(200, {"released": self._faults.release()})

    # -- state --------------------------------------------------------------------

    def _create_grant(self, request: Request) -> Response:
        body = parse_json_object(request.body)
        env_id = body.get("environmentId")
        if not isinstance(env_id, str) or self._state.environment(env_id) is None:
            raise ApiError(400, "unknown environmentId")
        email = body.get("email")
        if not isinstance(email, str) or not email.strip():
            raise ApiError(400, "email is required")
        kind = body.get("kind")
        if kind not in GRANT_KINDS:
            raise ApiError(400, "kind must be magic or oauth")
        flag = body.get("isAccountAbstracted")
        if flag is not None and not isinstance(flag, bool):
            raise ApiError(400, "isAccountAbstracted must be a boolean")
        return json_response(200, {"token": self._state.create_grant(kind, env_id, email, flag)})

    def _add_page(self, request: Request) -> Response:
        body = parse_json_object(request.body)
        name, html = body.get("name"), body.get("html")
        if not isinstance(name, str) or not name or not isinstance(html, str):
            raise ApiError(400, "name and html must be strings")
        self._pages[name] = html.encode("utf-8")
        return json_response(200, OK)

    def _page(self, request: Request) -> Response:
        page = self._pages.get(_query(request).get("name", ""))
        if page is None:
            raise ApiError(404, "no such page")
        return Response(200, page, content_type="text/html; charset=utf-8")

    def _loopback_port(self, request: Request) -> Response:
        # The tests share this emulator (and its loopback), so it is the one place that knows
        # which port it handed out last.
        port = self._loopback_ports.take()
        if port is None:
            ports = self._loopback_ports.ports
            raise ApiError(503, f"no free loopback port in {ports.start}..{ports.stop - 1}")
        return json_response(200, {"port": port})

    def _reset(self, request: Request) -> Response:
        self._pages.clear()
        self._state.reset()
        self._log.clear()
        self._faults.clear()
        return json_response(200, OK)

    def _get_control(self, request: Request) -> Response:
        return json_response(200, self._state.controls().as_dict())

    def _set_control(self, request: Request) -> Response:
        body = parse_json_object(request.body)
        outcome = body.get("oauthOutcome")
        if outcome is not None and outcome not in OAUTH_OUTCOMES:
            raise ApiError(400, "oauthOutcome must be success or error")
        email = body.get("oauthEmail")
        if email is not None and (not isinstance(email, str) or not email.strip()):
            raise ApiError(400, "oauthEmail must be a non-empty string")
        offset = body.get("clockOffsetSeconds")
        if offset is not None and (not isinstance(offset, (int, float)) or isinstance(offset, bool)):
            raise ApiError(400, "clockOffsetSeconds must be a number")
        error = body.get("oauthError")
        if error is not None and (not isinstance(error, str) or not error):
            raise ApiError(400, "oauthError must be a non-empty string")
        controls = self._state.update_controls(outcome, email, offset, error)
        return json_response(200, controls.as_dict())

    def _upsert_environment(self, request: Request) -> Response:
        try:
            env = parse_environment(parse_json_object(request.body))
        except ConfigError as exc:
            raise ApiError(400, str(exc)) from None
        self._state.upsert_environment(env)
        return json_response(200, OK)


def _query(request: Request) -> dict[str, str]:
    return {name: values[-1] for name, values in parse_qs(request.query, keep_blank_values=True).items()}


def _number(text: str, kind: Callable[[str], _Number], name: str) -> _Number:
    try:
        value = kind(text)
    except ValueError:
        raise ApiError(400, f"{name} must be a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ApiError(400, f"{name} must be a finite number")
    return value
