"""PortalAuth, the blocking client: every call end to end against the emulator, with the
sessions in the private keyring."""

from __future__ import annotations

import gc
import threading

import pytest
from conftest import CALLBACK, FROM_EMAIL, TEMPLATE_ID, Emulator

import portal_auth
from portal_auth import (
    AuthenticatedResult,
    AuthMethod,
    MagicLinkConfig,
    PortalAuth,
    PortalSession,
    TotpRequiredResult,
)


def sign_in(auth: PortalAuth, emu: Emulator, env: str, email: str) -> AuthenticatedResult:
    """A whole magic-link sign-in with TOTP enrollment, the way a user goes through it."""
    auth.send_magic_link(email)
    step = auth.handle_redirect(emu.outbox_link(email))
    assert isinstance(step, TotpRequiredResult)
    return auth.verify_totp(emu.totp_code(env, email), step.user_jwt)


def test_get_methods(make_client, emu: Emulator) -> None:
    env = emu.environment(methods=["EMAIL_MAGIC_LINK", "GOOGLE"], autoCreateWallet=False)
    methods = make_client(env).get_methods()
    assert methods.allowed_auth_methods == [AuthMethod.EMAIL_MAGIC_LINK, AuthMethod.GOOGLE]
    assert methods.auto_create_wallet is False
    assert methods == portal_auth.AuthMethodsResult(
        allowed_auth_methods=[AuthMethod("EMAIL_MAGIC_LINK"), AuthMethod("GOOGLE")], auto_create_wallet=False
    )


def test_magic_link_with_totp_enrollment_then_restore(make_client, emu: Emulator, env: str) -> None:
    auth = make_client(env)
    auth.send_magic_link("ada@example.com")
    message = emu.call("GET", "outbox?email=ada%40example.com")["messages"][-1]
    assert (message["fromEmail"], message["templateId"], message["redirectUrl"]) == (FROM_EMAIL, TEMPLATE_ID, CALLBACK)

    step = auth.handle_redirect(message["link"])
    assert isinstance(step, TotpRequiredResult)
    assert step.totp_link is not None and step.totp_link.startswith("otpauth://totp/")
    assert step.end_user_id
    signed_in = auth.verify_totp(emu.totp_code(env, "ada@example.com"), step.user_jwt)
    assert isinstance(signed_in, AuthenticatedResult)
    session = signed_in.session
    assert session.end_user_id == step.end_user_id
    token = session.get_token()
    issued = [issued["clientSessionToken"] for issued in emu.call("GET", "sessions")["sessions"]]
    assert token in issued

    # A second client of the environment finds the session in the keyring.
    restored = make_client(env).restore_session()
    assert isinstance(restored, PortalSession)
    assert restored.end_user_id == session.end_user_id and restored.get_token() == token


def test_second_sign_in_asks_for_the_code_without_enrollment(make_client, emu: Emulator, env: str) -> None:
    auth = make_client(env)
    sign_in(auth, emu, env, "grace@example.com")
    step = auth.handle_redirect(emu.grant_redirect(env, "grace@example.com"))
    assert isinstance(step, TotpRequiredResult) and step.totp_link is None


def test_without_totp_the_redirect_signs_in(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    result = make_client(env).handle_redirect(emu.grant_redirect(env, "lin@example.com"))
    assert isinstance(result, AuthenticatedResult)
    assert result.session.end_user_id and result.is_account_abstracted is False


def test_a_replayed_redirect_returns_the_very_same_session_object(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    url = emu.grant_redirect(env, "replay@example.com")
    first = auth.handle_redirect(url)
    second = auth.handle_redirect(url)
    assert isinstance(first, AuthenticatedResult) and isinstance(second, AuthenticatedResult)
    assert second.session is first.session
    assert len(emu.requests("/magic-links/validations")) == 1


def test_a_url_that_is_not_a_sign_in_redirect_returns_none(make_client, env: str, emu: Emulator) -> None:
    auth = make_client(env)
    assert auth.handle_redirect("otherapp://auth/callback?token=abc") is None
    assert auth.handle_redirect("https://example.com/") is None
    assert emu.requests("/validations") == []


def test_login_urls(make_client, env: str) -> None:
    auth = make_client(env)
    google = auth.login_with_google()
    apple = auth.login_with_apple()
    assert "/oauth/google/authorize" in google.authorize_url
    assert "/oauth/apple/authorize" in apple.authorize_url
    assert google == portal_auth.AuthorizeUrlResult(authorize_url=google.authorize_url)


def test_clear_persisted_session(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    result = auth.handle_redirect(emu.grant_redirect(env, "clear@example.com"))
    assert isinstance(result, AuthenticatedResult)
    auth.clear_persisted_session()
    assert make_client(env).restore_session() is None
    # The session object itself still works until invalidated.
    assert result.session.get_token()


def test_invalidate_forgets_the_token_and_the_stored_copy(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    result = auth.handle_redirect(emu.grant_redirect(env, "bye@example.com"))
    assert isinstance(result, AuthenticatedResult)
    result.session.invalidate()
    with pytest.raises(portal_auth.SessionInvalidated):
        result.session.get_token()
    assert make_client(env).restore_session() is None


def test_invalidating_an_older_session_keeps_the_newer_one_stored(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    older = auth.handle_redirect(emu.grant_redirect(env, "cas@example.com"))
    newer = auth.handle_redirect(emu.grant_redirect(env, "cas@example.com"))
    assert isinstance(older, AuthenticatedResult) and isinstance(newer, AuthenticatedResult)
    older.session.invalidate()
    restored = make_client(env).restore_session()
    assert restored is not None and restored.get_token() == newer.session.get_token()


def test_sessions_outlive_their_client(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    result = auth.handle_redirect(emu.grant_redirect(env, "outlive@example.com"))
    assert isinstance(result, AuthenticatedResult)
    auth.close()
    del auth
    gc.collect()
    assert result.session.get_token()
    result.session.invalidate()
    assert make_client(env).restore_session() is None


def test_reprs_hide_secrets(make_client, emu: Emulator, env: str) -> None:
    auth = make_client(env)
    auth.send_magic_link("repr@example.com")
    step = auth.handle_redirect(emu.outbox_link("repr@example.com"))
    assert isinstance(step, TotpRequiredResult) and step.totp_link is not None
    assert step.user_jwt not in repr(step) and step.totp_link not in repr(step)
    assert "<redacted>" in repr(step) and step.end_user_id in repr(step)
    signed_in = auth.verify_totp(emu.totp_code(env, "repr@example.com"), step.user_jwt)
    token = signed_in.session.get_token()
    assert token not in repr(signed_in) and token not in repr(signed_in.session)
    assert repr(signed_in.session) == f"PortalSession(end_user_id={signed_in.session.end_user_id!r})"


def test_a_host_may_build_a_totp_step_it_kept(make_client, emu: Emulator, env: str) -> None:
    auth = make_client(env)
    auth.send_magic_link("kept@example.com")
    step = auth.handle_redirect(emu.outbox_link("kept@example.com"))
    assert isinstance(step, TotpRequiredResult)
    kept = TotpRequiredResult(user_jwt=step.user_jwt, totp_link=step.totp_link, end_user_id=step.end_user_id,
                              expires_at=step.expires_at)
    assert kept == step
    with pytest.raises(AttributeError):
        kept.user_jwt = "changed"  # type: ignore[misc]
    assert auth.verify_totp(emu.totp_code(env, "kept@example.com"), kept.user_jwt).session.end_user_id == step.end_user_id


def test_context_manager_closes(emu: Emulator, env: str) -> None:
    with PortalAuth(auth_environment_id=env, redirect_url=CALLBACK, api_host=emu.url) as auth:
        assert auth.get_methods().allowed_auth_methods
    with pytest.raises(portal_auth.PortalAuthError, match="closed"):
        auth.get_methods()
    auth.close()  # twice is harmless


def test_threads_share_one_client(make_client, emu: Emulator) -> None:
    env = emu.environment(totp=False)
    auth = make_client(env)
    results: list[object] = []
    lock = threading.Lock()

    def work(index: int) -> None:
        outcome = auth.handle_redirect(emu.grant_redirect(env, f"thread{index}@example.com"))
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 16 and all(isinstance(result, AuthenticatedResult) for result in results)


def test_magic_link_config_is_keyword_constructible() -> None:
    config = MagicLinkConfig(from_email="a@example.com", template_id="t")
    assert (config.from_email, config.template_id) == ("a@example.com", "t")


def test_a_session_is_never_copied(make_client, emu: Emulator) -> None:
    import copy
    import pickle

    env = emu.environment(totp=False)
    result = make_client(env).handle_redirect(emu.grant_redirect(env, "copy@example.com"))
    assert isinstance(result, AuthenticatedResult)
    assert copy.copy(result.session) is result.session
    duplicate = copy.deepcopy(result)
    assert duplicate.session is result.session
    del result
    gc.collect()
    assert duplicate.session.get_token()  # still this process's one session object
    with pytest.raises(TypeError):
        pickle.dumps(duplicate.session)
