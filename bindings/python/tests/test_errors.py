"""Every exception of the contract, raised end to end: its class, its attributes, its message
(which never carries a secret)."""

from __future__ import annotations

import pytest
from conftest import CALLBACK, Emulator

import portal_auth
from portal_auth import AuthMethod, MagicLinkConfig, PortalAuth, PortalAuthError, TotpRequiredResult


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"auth_environment_id": ""}, "auth_environment_id"),
        ({"auth_environment_id": "   "}, "auth_environment_id"),
        ({"auth_environment_id": 42}, "auth_environment_id"),
        ({"auth_environment_id": "env\0x"}, "auth_environment_id"),
        ({"auth_environment_id": "env\udcff"}, "auth_environment_id"),
        ({"redirect_url": ""}, "redirect_url"),
        ({"redirect_url": None}, "redirect_url"),
        ({"api_host": ""}, "api_host"),
        ({"api_host": "ftp://example.com"}, "api_host"),
        ({"magic_link": ("a@example.com", "t")}, "magic_link"),
        ({"magic_link": MagicLinkConfig(from_email="a\0b", template_id="t")}, "from_email"),
        ({"is_account_abstracted": "yes"}, "is_account_abstracted"),
        ({"storage": "disk"}, "storage"),
        ({"storage": object()}, "storage"),
        ({"request_timeout": float("nan")}, "request_timeout"),
        ({"connect_timeout": float("-inf")}, "connect_timeout"),
        ({"connect_timeout": 1e12}, "connect_timeout"),
        ({"connect_timeout": -3e6}, "connect_timeout"),
        ({"request_timeout": 10**400}, "request_timeout"),
    ],
)
def test_invalid_constructor_arguments(options: dict[str, object], name: str) -> None:
    arguments: dict[str, object] = {"auth_environment_id": "env", "redirect_url": CALLBACK, "storage": "memory"}
    arguments.update(options)
    with pytest.raises(portal_auth.InvalidArgument) as raised:
        PortalAuth(**arguments)  # type: ignore[arg-type]
    assert raised.value.name == name
    assert isinstance(raised.value, PortalAuthError) and str(raised.value)


def test_invalid_call_arguments(make_client, env: str) -> None:
    auth = make_client(env)
    for call, name in [
        (lambda: auth.send_magic_link(""), "email"),
        (lambda: auth.send_magic_link(None), "email"),
        (lambda: auth.send_magic_link("a\0b@example.com"), "email"),
        (lambda: auth.handle_redirect(b"myapp://auth/callback"), "url"),
        (lambda: auth.verify_totp("123456", "\udc80"), "user_jwt"),
        (lambda: auth.verify_totp(123456, "jwt"), "code"),
    ]:
        with pytest.raises(portal_auth.InvalidArgument) as raised:
            call()
        assert raised.value.name == name


def test_magic_link_not_configured(make_client, env: str, emu: Emulator) -> None:
    auth = make_client(env, magic_link=None)
    with pytest.raises(portal_auth.MagicLinkNotConfigured):
        auth.send_magic_link("x@example.com")
    with pytest.raises(portal_auth.MagicLinkNotConfigured):  # checked before the email
        auth.send_magic_link(None)
    assert emu.requests("/magic-links") == []


def test_rate_limited(make_client, env: str) -> None:
    auth = make_client(env)
    with pytest.raises(portal_auth.RateLimited) as raised:
        for _ in range(10):
            auth.send_magic_link("often@example.com")
    assert raised.value.retry_after is None


def test_rate_limited_and_request_errors_carry_retry_after(make_client, env: str, emu: Emulator) -> None:
    emu.fault("/magic-links", "status", status=429, retryAfter="120")
    with pytest.raises(portal_auth.RateLimited) as limited:
        make_client(env).send_magic_link("later@example.com")
    assert limited.value.retry_after == 120 and "120 s" in str(limited.value)
    emu.fault("/methods", "status", status=503, retryAfter="Wed, 21 Oct 2015 07:28:00 GMT")
    with pytest.raises(portal_auth.RequestError) as unavailable:
        make_client(env).get_methods()
    assert (unavailable.value.status, unavailable.value.retry_after) == (503, 0)
    assert len(emu.requests("/magic-links")) == 1


def test_auth_method_unavailable(make_client, emu: Emulator) -> None:
    env = emu.environment(methods=["EMAIL_MAGIC_LINK", "GOOGLE"])
    with pytest.raises(portal_auth.AuthMethodUnavailable) as raised:
        make_client(env).login_with_apple()
    assert raised.value.method is AuthMethod.APPLE


def test_authentication_failed(make_client, env: str) -> None:
    with pytest.raises(portal_auth.AuthenticationFailed) as raised:
        make_client(env).handle_redirect(CALLBACK + "?error=oauth_failed")
    assert raised.value.error == "oauth_failed"


def test_a_providers_error_text_is_escaped_in_the_message(make_client, env: str) -> None:
    with pytest.raises(portal_auth.AuthenticationFailed) as raised:
        make_client(env).handle_redirect(CALLBACK + "?error=denied%0AWARNING%3A+forged%1B%5B2J")
    assert raised.value.error == "denied\nWARNING: forged\x1b[2J"
    assert str(raised.value) == "Authentication failed: denied\\nWARNING: forged\\x1b[2J"


@pytest.mark.parametrize(
    ("options", "name"),
    [({"auth_environment_id": " "}, "auth_environment_id"), ({"redirect_url": " "}, "redirect_url"),
     ({"api_host": "bad host"}, "api_host")],
)
def test_a_message_names_the_argument_as_python_does(options: dict[str, str], name: str) -> None:
    arguments = {"auth_environment_id": "env", "redirect_url": CALLBACK, **options}
    with pytest.raises(portal_auth.InvalidArgument) as raised:
        PortalAuth(**arguments, storage="memory")  # type: ignore[arg-type]
    assert raised.value.name == name
    assert str(raised.value) == f"Invalid argument: {name} is blank or unusable."


def test_malformed_response(make_client, env: str, emu: Emulator) -> None:
    for body in ["not json", '{"data": null}', "[]"]:
        emu.fault("/methods", "malformed", body=body)
        with pytest.raises(portal_auth.MalformedResponse) as raised:
            make_client(env).get_methods()
        assert raised.value.path.endswith("/methods") and raised.value.missing is None
    emu.fault("/magic-links/validations", "malformed", body='{"data": {"clientSessionToken": "cst_x"}}')
    with pytest.raises(portal_auth.MalformedResponse) as raised:
        make_client(env).handle_redirect(emu.grant_redirect(env, "half@example.com"))
    assert raised.value.missing == "endUserId" and "cst_x" not in str(raised.value)


def test_invalid_grant_response(make_client, env: str, emu: Emulator) -> None:
    emu.fault("/magic-links/validations", "malformed", body='{"data": {}}')
    with pytest.raises(portal_auth.InvalidGrantResponse):
        make_client(env).handle_redirect(emu.grant_redirect(env, "odd@example.com"))


def test_invalid_user_jwt(make_client, env: str, emu: Emulator) -> None:
    with pytest.raises(portal_auth.InvalidUserJwt) as raised:
        make_client(env).verify_totp("123456", "not-a-jwt")
    assert raised.value.detail and "not-a-jwt" not in str(raised.value)
    assert emu.requests("/totps/validations") == []


def test_account_abstraction_unavailable(make_client, env: str) -> None:
    with pytest.raises(portal_auth.AccountAbstractionUnavailable) as raised:
        make_client(env, is_account_abstracted=True).login_with_google()
    assert raised.value.message and raised.value.message in str(raised.value)


@pytest.mark.parametrize("status", [500, 503, 404])
def test_request_error_with_status(make_client, env: str, emu: Emulator, status: int) -> None:
    emu.fault("/methods", "status", status=status)
    with pytest.raises(portal_auth.RequestError) as raised:
        make_client(env).get_methods()
    assert raised.value.status == status and not isinstance(raised.value, portal_auth.Unauthorized)
    assert raised.value.body == '{"error":"injected"}'


def test_a_request_error_carries_the_servers_reason(make_client, env: str, emu: Emulator) -> None:
    reason = '{"error":"redirectUrl is not allow-listed"}'
    emu.fault("/magic-links", "status", status=400, body=reason)
    with pytest.raises(portal_auth.RequestError) as raised:
        make_client(env).send_magic_link("reason@example.com")
    assert (raised.value.status, raised.value.body) == (400, reason)
    assert "allow-listed" not in str(raised.value)
    # An empty body has none; nor has the answer to a request that carried a grant.
    emu.fault("/methods", "status", status=502, body="")
    with pytest.raises(portal_auth.RequestError) as raised:
        make_client(env).get_methods()
    assert raised.value.body is None
    url = emu.grant_redirect(env, "echo@example.com")
    grant = url.split("token=")[1].split("&")[0]
    emu.fault("/magic-links/validations", "status", status=500, body=f"echo {grant}")
    with pytest.raises(portal_auth.RequestError) as raised:
        make_client(env).handle_redirect(url)
    assert raised.value.status == 500 and raised.value.body is None


@pytest.mark.parametrize("body", ["", "{}", '{"data":null}', "<html><body>Sent</body></html>"])
def test_a_magic_link_send_checks_only_the_status(make_client, env: str, emu: Emulator, body: str) -> None:
    emu.fault("/magic-links", "status", status=200, body=body)
    assert make_client(env).send_magic_link("any-body@example.com") is None


def test_unauthorized(make_client, env: str, emu: Emulator) -> None:
    emu.fault("/methods", "status", status=401)
    with pytest.raises(portal_auth.Unauthorized) as raised:
        make_client(env).get_methods()
    assert isinstance(raised.value, portal_auth.RequestError) and raised.value.status == 401


def test_request_error_without_response(make_client, env: str, emu: Emulator) -> None:
    emu.fault("/methods", "drop")
    with pytest.raises(portal_auth.RequestError) as raised:
        make_client(env).get_methods()
    assert raised.value.status is None


def test_connection_refused_and_timeout(emu: Emulator, env: str) -> None:
    with PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host="http://127.0.0.1:9", storage="memory") as auth:
        with pytest.raises(portal_auth.NetworkError) as refused:
            auth.get_methods()
        assert refused.value.status is None
        assert refused.value.reason is portal_auth.NetworkFailureReason.CONNECTION_REFUSED
        assert str(refused.value).endswith("(http://127.0.0.1:9)")
    emu.fault("/methods", "hold")
    with PortalAuth(
        auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage="memory", request_timeout=0.2
    ) as auth:
        with pytest.raises(portal_auth.NetworkError) as timed_out:
            auth.get_methods()
        assert timed_out.value.reason is portal_auth.NetworkFailureReason.REQUEST_TIMED_OUT
    emu.call("POST", "release")


@pytest.mark.parametrize("ca_file", ["", "/nonexistent/ca.pem", "/tmp", b"/etc/hostname", 3])
def test_a_ca_file_that_is_not_a_readable_file_is_refused(ca_file: object) -> None:
    with pytest.raises(portal_auth.InvalidArgument) as raised:
        PortalAuth(auth_environment_id="env", redirect_url=CALLBACK, storage="memory", ca_file=ca_file)  # type: ignore[arg-type]
    assert raised.value.name == "ca_file"


def test_a_timeout_of_zero_or_less_is_the_library_default(emu: Emulator, env: str) -> None:
    # Passed to the library unchanged: neither refused nor an instant timeout.
    for timeout in (0, -1, -0.5):
        with PortalAuth(
            auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url, storage="memory",
            connect_timeout=timeout, request_timeout=timeout,
        ) as auth:
            assert isinstance(auth.get_methods(), portal_auth.AuthMethodsResult)


def test_session_invalidated(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    result = make_client(env).handle_redirect(emu.grant_redirect(env, "gone@example.com"))
    assert isinstance(result, portal_auth.AuthenticatedResult)
    result.session.invalidate()
    with pytest.raises(portal_auth.SessionInvalidated):
        result.session.get_token()


def test_a_verified_code_that_is_wrong(make_client, env: str, emu: Emulator) -> None:
    auth = make_client(env)
    auth.send_magic_link("wrong@example.com")
    step = auth.handle_redirect(emu.outbox_link("wrong@example.com"))
    assert isinstance(step, TotpRequiredResult)
    with pytest.raises(portal_auth.PortalAuthError) as raised:
        auth.verify_totp("000000" if emu.totp_code(env, "wrong@example.com") != "000000" else "111111", step.user_jwt)
    assert step.user_jwt not in str(raised.value)


def test_the_hierarchy() -> None:
    for name in portal_auth.__all__:
        item = getattr(portal_auth, name)
        if isinstance(item, type) and issubclass(item, BaseException):
            assert issubclass(item, PortalAuthError), name
    for kind, code in [
        (portal_auth.SignInClosed, "POPUP_CLOSED"),
        (portal_auth.SignInUnavailable, "POPUP_UNAVAILABLE"),
        (portal_auth.SignInInProgress, "SIGN_IN_ALREADY_IN_PROGRESS"),
        (portal_auth.SignInCallbackIncomplete, "CALLBACK_INCOMPLETE"),
    ]:
        assert issubclass(kind, portal_auth.SignInError) and kind.code == code
    assert issubclass(portal_auth.Unauthorized, portal_auth.RequestError)
    assert portal_auth.Unauthorized().status == 401


@pytest.mark.parametrize(
    "error",
    [
        portal_auth.InvalidArgument("email"),
        portal_auth.AuthMethodUnavailable("APPLE"),
        portal_auth.AuthenticationFailed("denied"),
        portal_auth.MalformedResponse("/api/v3/auth/methods", None),
        portal_auth.InvalidUserJwt("not a JWT"),
        portal_auth.SessionStorageFailure("The keyring is locked.", portal_auth.StorageFailureReason.KEYRING_LOCKED),
        portal_auth.SignInUnavailable("No browser.", portal_auth.SignInUnavailableReason.NO_BROWSER),
        portal_auth.RequestError(400, "HTTP 400.", '{"error":"nope"}'),
        portal_auth.AccountAbstractionUnavailable("no gas", "Account abstraction is unavailable: no gas"),
        portal_auth.RequestError(503),
        portal_auth.RequestError(None),
        portal_auth.Unauthorized(),
        portal_auth.SignInClosed("The sign-in timed out.", portal_auth.SignInClosedReason.SIGN_IN_TIMED_OUT),
        portal_auth.RateLimited(),
        portal_auth.RateLimited("Later.", 60),
        portal_auth.RequestError(503, "HTTP 503.", None, 30),
        portal_auth.NetworkError("No answer.", portal_auth.NetworkFailureReason.PROXY_AUTH_REQUIRED),
    ],
)
def test_errors_survive_pickle_and_copy(error: PortalAuthError) -> None:
    import copy
    import pickle

    for again in (pickle.loads(pickle.dumps(error)), copy.copy(error)):
        assert type(again) is type(error) and str(again) == str(error)
        assert again.__dict__ == error.__dict__


def test_auth_method_unavailable_takes_the_wire_name() -> None:
    assert portal_auth.AuthMethodUnavailable("GOOGLE").method == AuthMethod.GOOGLE
