"""Portal's Client Auth endpoints under /api/v3/auth (docs/protocol.md §1, §2, §7, §8)."""

import re
import secrets
from collections.abc import Callable

from . import issued, jwt, totp
from .config import Environment
from .messages import (
    PORTAL_PREFIX,
    ApiError,
    JsonObject,
    Request,
    Response,
    data_response,
    error_response,
    parse_json_object,
)
from .state import State
from .urls import append_query, decode_percent, encode_query_bytes

TRACE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
AA_UNAVAILABLE = "Gas sponsorship is not enabled for this environment."
TOTP_PATH = PORTAL_PREFIX + "/totps/validations"

# An endpoint: called with the environment named by the request's headers.
Route = Callable[[Environment, Request], Response]


class PortalApi:
    """Portal's six Client Auth endpoints under /api/v3/auth, as docs/protocol.md §2 describes them."""

    def __init__(self, state: State, base_url: Callable[[], str]) -> None:
        self._state = state
        self._base_url = base_url  # called late: the port is known only once bound
        self._routes: dict[tuple[str, str], Route] = {
            ("GET", "/methods"): self._get_methods,
            ("POST", "/magic-links"): self._send_magic_link,
            ("POST", "/magic-links/validations"): self._exchange_magic_link,
            ("GET", "/oauth/urls"): self._oauth_urls,
            ("POST", "/oauth/tokens"): self._exchange_oauth,
            ("POST", "/totps/validations"): self._verify_totp,
        }

    def handle(self, request: Request) -> Response:
        """The answer to a Portal request; 404 for a path that is not an endpoint."""
        route = None
        if request.path.startswith(PORTAL_PREFIX + "/"):
            route = self._routes.get((request.method, request.path[len(PORTAL_PREFIX):]))
        if route is None:
            return error_response(404, "not found")
        try:
            env = self._check_headers(request)
            return route(env, request)
        except ApiError as exc:
            return error_response(exc.status, exc.message)

    # -- docs/protocol.md §1: transport rules -------------------------------------

    def _check_headers(self, request: Request) -> Environment:
        env_id = request.header("x-portal-auth-environment-id")
        env = self._state.environment(env_id) if env_id is not None else None
        if env is None:
            raise ApiError(401, "unknown auth environment")
        if request.header("accept") != "application/json":
            raise ApiError(400, "Accept")
        if request.header("content-type") != "application/json":
            raise ApiError(400, "Content-Type")
        trace_id = request.header("x-portal-trace-id")
        if trace_id is None or not TRACE_ID.fullmatch(trace_id):
            raise ApiError(400, "X-Portal-Trace-Id")
        if request.has_header("authorization") and request.path != TOTP_PATH:
            raise ApiError(400, "unexpected Authorization header")
        return env

    # -- endpoints --------------------------------------------------------------

    def _get_methods(self, env: Environment, request: Request) -> Response:
        return data_response(
            {"allowedAuthMethods": list(env.allowed_methods), "autoCreateWallet": env.auto_create_wallet}
        )

    def _send_magic_link(self, env: Environment, request: Request) -> Response:
        body = _json_body(request, {"email", "redirectUrl", "fromEmail", "templateId", "isAccountAbstracted"})
        if "EMAIL_MAGIC_LINK" not in env.allowed_methods:
            raise ApiError(400, "EMAIL_MAGIC_LINK is not enabled for this environment")
        email = _required_string(body, "email")
        from_email = _required_string(body, "fromEmail")
        template_id = _required_string(body, "templateId")
        redirect_url = body.get("redirectUrl")
        if not isinstance(redirect_url, str):
            raise ApiError(400, "redirectUrl is required")
        if redirect_url not in env.redirect_urls:
            raise ApiError(400, "redirect URL not allowed")
        account_abstracted = _optional_bool(body, "isAccountAbstracted")
        if account_abstracted and not env.account_abstraction:
            raise ApiError(400, AA_UNAVAILABLE)
        if not self._state.count_send(env.id, email):
            raise ApiError(429, "rate limited")
        grant = self._state.create_grant("magic", env.id, email, account_abstracted)
        message_id = "msg_" + secrets.token_hex(8)
        self._state.add_outbox(
            {
                "id": message_id,
                "email": email,
                "link": append_query(redirect_url, f"token={grant}&authMethod=EMAIL_MAGIC_LINK"),
                # What the email's button points at: Portal's page, which sends the browser on
                # to the redirect URL, as a user's click would go.
                "emailLink": f"{self._base_url()}/_emulator/mail/open?id={message_id}",
                "redirectUrl": redirect_url,
                "environmentId": env.id,
                "fromEmail": from_email,
                "templateId": template_id,
            }
        )
        return data_response({})

    def _exchange_magic_link(self, env: Environment, request: Request) -> Response:
        return self._exchange(env, request, "magic")

    def _exchange_oauth(self, env: Environment, request: Request) -> Response:
        return self._exchange(env, request, "oauth")

    def _oauth_urls(self, env: Environment, request: Request) -> Response:
        redirect_url, account_abstracted = _parse_oauth_query(request.query)
        if redirect_url not in env.redirect_urls:
            raise ApiError(400, "redirect URL not allowed")
        if account_abstracted and not env.account_abstraction:
            raise ApiError(400, AA_UNAVAILABLE)
        # One state for both providers: the client must not reuse a response.
        state = self._state.create_oauth_state(env.id, redirect_url, account_abstracted)
        base = self._base_url()
        urls: dict[str, str] = {}
        for method, provider in (("GOOGLE", "google"), ("APPLE", "apple")):
            if method in env.allowed_methods:
                urls[provider] = f"{base}/_emulator/oauth/{provider}/authorize?state={state}"
        return data_response(urls)

    def _exchange(self, env: Environment, request: Request, kind: str) -> Response:
        body = _json_body(request, {"token"})
        token = body.get("token")
        if not isinstance(token, str) or not token:
            raise ApiError(400, "token is required")
        grant = self._state.redeem_grant(token, kind, env.id)
        if grant is None:
            raise ApiError(401, "invalid grant")
        user = self._state.find_or_create_user(env.id, grant.email, grant.is_account_abstracted)
        if env.totp_required:
            answer = {"endUserId": user.end_user_id, "userJwt": self._state.mint_user_jwt(user)}
            new_secret = self._state.enroll_totp(user)
            if new_secret is not None:
                answer["totpLink"] = totp.otpauth_link(user.email, new_secret)
                issued.record("totpLink", answer["totpLink"])
                issued.record("totpSecret", totp.base32_secret(new_secret))
            return data_response(answer)
        session = self._state.issue_session(user, via="exchange")
        return data_response(
            {
                "endUserId": session["endUserId"],
                "clientId": session["clientId"],
                "clientSessionToken": session["clientSessionToken"],
                "isAccountAbstracted": session["isAccountAbstracted"],
            }
        )

    def _verify_totp(self, env: Environment, request: Request) -> Response:
        token = _bearer(request.header("authorization"))
        if token is None:
            raise ApiError(401, "missing bearer token")
        body = _json_body(request, {"code"})
        code = body.get("code")
        if not isinstance(code, str):
            raise ApiError(400, "code must be a string")
        try:
            claims = jwt.verify(token, self._state.config.jwt_secret, self._state.now())
        except jwt.JwtError:
            raise ApiError(401, "invalid userJwt") from None
        jti = claims.get("jti")
        end_user_id = claims.get("endUserId")
        if claims.get("env") != env.id or not isinstance(jti, str) or not isinstance(end_user_id, str):
            raise ApiError(401, "invalid userJwt")
        if self._state.jti_spent(jti):
            raise ApiError(401, "userJwt already used")
        user = self._state.user_by_id(env.id, end_user_id)
        if user is None or user.totp_secret is None:
            raise ApiError(401, "invalid userJwt")
        # A wrong code leaves the JWT unspent so the user can try again.
        if not totp.verify(user.totp_secret, code, self._state.now()):
            raise ApiError(401, "invalid code")
        if not self._state.spend_jti(jti):
            raise ApiError(401, "userJwt already used")
        session = self._state.issue_session(user, via="totp")
        return data_response(
            {
                "clientSessionToken": session["clientSessionToken"],
                "clientId": session["clientId"],
                "isAccountAbstracted": session["isAccountAbstracted"],
            }
        )


def _json_body(request: Request, allowed: set[str]) -> JsonObject:
    body = parse_json_object(request.body)
    if _contains_null(body):
        # The client must omit unset fields rather than send null.
        raise ApiError(400, "null field")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise ApiError(400, f"unexpected field {unknown[0]}")
    return body


def _contains_null(value: object) -> bool:
    # Iterative, so a hostile deeply nested body cannot exhaust the stack.
    pending = [value]
    while pending:
        item = pending.pop()
        if item is None:
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _required_string(body: JsonObject, name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ApiError(400, f"{name} is required")
    return value


def _optional_bool(body: JsonObject, name: str) -> bool | None:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise ApiError(400, f"{name} must be a boolean")
    return value


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token or token != token.strip():
        return None
    return token


def _parse_oauth_query(query: str) -> tuple[str, bool | None]:
    """Decode `redirectUrl=<enc>[&isAccountAbstracted=true|false]`, insisting on the
    exact encoding of docs/protocol.md §2 (the backend matches it byte for byte)."""
    params: dict[str, str] = {}
    for pair in query.split("&") if query else []:
        name, _, value = pair.partition("=")
        if name in params:
            raise ApiError(400, "duplicate query parameter")
        params[name] = value
    if "redirectUrl" not in params:
        raise ApiError(400, "redirectUrl is required")
    unknown = set(params) - {"redirectUrl", "isAccountAbstracted"}
    if unknown:
        raise ApiError(400, "unexpected query parameter")
    flag = params.get("isAccountAbstracted")
    if flag is not None and flag not in ("true", "false"):
        raise ApiError(400, "isAccountAbstracted must be true or false")
    raw_url = decode_percent(params["redirectUrl"])
    expected = "redirectUrl=" + encode_query_bytes(raw_url)
    if flag is not None:
        expected += "&isAccountAbstracted=" + flag
    if expected != query:
        raise ApiError(400, "redirectUrl is not encoded as expected")
    try:
        redirect_url = raw_url.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "redirect URL not allowed") from None
    return redirect_url, None if flag is None else flag == "true"
