//! `sign_in_with_magic_link` against the Portal emulator: Debian's real headless Chromium
//! opens the email's button, follows the emulator's redirect to the loopback listener, and
//! the call completes with no pasted URL (TOTP enrollment included); a pasted link completing
//! the wait, the timeout, cancel, the guard shared with browser sign-ins, and a redirect URL
//! that is not loopback.
mod support;

use std::net::TcpListener;
use std::time::Duration;

use portal_auth::{Error, PortalAuth, SignInClosedReason, SignInResult, SignInUnavailableReason};
use support::*;

fn client(environment: &str, redirect_url: &str) -> PortalAuth {
    PortalAuth::new(&options(environment, redirect_url)).unwrap()
}

fn port_of(redirect_url: &str) -> u16 {
    redirect_url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().parse().unwrap()
}

#[test]
fn chromium_opens_the_email_and_the_sign_in_completes_with_totp_enrollment() {
    let redirect_url = loopback_redirect();
    let environment = environment(true, &redirect_url);
    let email = "rust-chromium@example.com";
    let auth = client(&environment, &redirect_url);
    let signing_in = auth.sign_in_with_magic_link(email, Some(Duration::from_secs(120)));

    let button = mail(email, 1, "emailLink");
    assert!(button.contains("/_emulator/mail/open?id=msg_"), "{}", button);
    let page = chromium(&button);
    assert!(page.contains("enter the code from your authenticator app"), "the page Chromium ended on: {}", page);

    let step = match signing_in.wait().unwrap() {
        SignInResult::TotpRequired(step) => step,
        other => panic!("expected the TOTP step, got {:?}", other),
    };
    assert!(step.totp_link.is_some(), "a first sign-in enrolls");
    let signed_in = auth.verify_totp(&current_code(&environment, email), &step.user_jwt).wait().unwrap();
    assert_eq!(signed_in.session.end_user_id(), step.end_user_id);
    // The listener is gone with the sign-in: its port is free again.
    TcpListener::bind(("127.0.0.1", port_of(&redirect_url))).expect("the port is free once the sign-in ended");
    signed_in.session.invalidate().wait().unwrap();
}

#[test]
fn a_pasted_link_completes_the_wait_once() {
    let redirect_url = loopback_redirect();
    let environment = environment(false, &redirect_url);
    let email = "rust-pasted@example.com";
    let auth = client(&environment, &redirect_url);
    let signing_in = auth.sign_in_with_magic_link(email, None);
    let pasted = auth.handle_redirect(&mail(email, 1, "link")).wait().unwrap();
    let pasted = match pasted {
        Some(SignInResult::Authenticated(authenticated)) => authenticated.session,
        other => panic!("expected a session, got {:?}", other),
    };
    match signing_in.wait().unwrap() {
        SignInResult::Authenticated(authenticated) => assert!(authenticated.session.same(&pasted), "one exchange, one session"),
        other => panic!("expected a session, got {:?}", other),
    }
    pasted.invalidate().wait().unwrap();
}

#[test]
fn a_timeout_or_cancel_ends_the_wait_with_nothing_exchanged() {
    let redirect_url = loopback_redirect();
    let environment = environment(false, &redirect_url);
    let auth = client(&environment, &redirect_url);

    let email = "rust-timeout@example.com";
    match auth.sign_in_with_magic_link(email, Some(Duration::from_millis(200))).wait() {
        Err(Error::SignInClosed { reason: SignInClosedReason::TimedOut, message }) => assert!(!message.is_empty()),
        other => panic!("expected SignInClosed, got {:?}", other),
    }
    let link = mail(email, 1, "link");
    TcpListener::bind(("127.0.0.1", port_of(&redirect_url))).expect("the port is free once the wait ended");

    let cancelled = "rust-cancel@example.com";
    let signing_in = auth.sign_in_with_magic_link(cancelled, None);
    let cancelled_link = mail(cancelled, 1, "link"); // sent: the wait is on
    signing_in.cancel();
    assert!(matches!(signing_in.wait(), Err(Error::SignInClosed { reason: SignInClosedReason::Cancelled, .. })));

    // Nothing was exchanged: each link's grant still signs its user in.
    for link in [link, cancelled_link] {
        match auth.handle_redirect(&link).wait().unwrap() {
            Some(SignInResult::Authenticated(authenticated)) => authenticated.session.invalidate().wait().unwrap(),
            other => panic!("expected a session, got {:?}", other),
        }
    }
}

#[test]
fn one_sign_in_at_a_time_and_a_loopback_redirect_url_only() {
    let redirect_url = loopback_redirect();
    let environment = environment(false, &redirect_url);
    let auth = client(&environment, &redirect_url);
    let first = auth.sign_in_with_magic_link("rust-first@example.com", None);
    mail("rust-first@example.com", 1, "link"); // sent: the first one waits
    assert!(matches!(auth.sign_in_with_magic_link("rust-second@example.com", None).wait(), Err(Error::SignInInProgress { .. })));
    assert!(matches!(auth.sign_in_with_google(None).wait(), Err(Error::SignInInProgress { .. })));
    first.cancel();
    assert!(matches!(first.wait(), Err(Error::SignInClosed { .. })), "the guard is released when the call ends");
    let again = auth.sign_in_with_magic_link("rust-again@example.com", Some(Duration::from_millis(100)));
    assert!(matches!(again.wait(), Err(Error::SignInClosed { .. })));

    let custom = client(&support::environment(false, APP_REDIRECT), APP_REDIRECT);
    match custom.sign_in_with_magic_link("rust-custom@example.com", None).wait() {
        Err(Error::SignInUnavailable { reason: SignInUnavailableReason::RedirectNotLoopback, .. }) => {}
        other => panic!("expected RedirectNotLoopback, got {:?}", other),
    }
    let sent = control("GET", "outbox?email=rust-custom%40example.com", None);
    assert!(json_string(&sent, "link").is_none(), "no email is sent: {}", sent);
    assert!(matches!(auth.sign_in_with_magic_link("bad\0email", None).wait(), Err(Error::InvalidArgument { name, .. }) if name == "email"));
}
