//! Sign-in through the crate against the Portal emulator and the session bus's keyring:
//! magic link with TOTP, restore, invalidate, errors with their fields, futures on a std-only
//! executor, browser sign-in with a fetching opener, threads. No test here injects faults,
//! so they run in parallel.
mod support;

use std::io;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;

use portal_auth::{
    totp_qr_matrix, totp_qr_png, totp_qr_svg, totp_secret, AuthMethod, Call, Error, Options, PortalAuth, Session,
    NetworkFailureReason, SignInClosedReason, SignInResult, SignInUnavailableReason, Storage, TerminalColors,
    UnauthorizedReason,
};
use support::*;

fn client(environment: &str) -> PortalAuth {
    PortalAuth::new(&options(environment, APP_REDIRECT)).unwrap()
}

fn totp_step(result: Option<SignInResult>) -> portal_auth::TotpRequired {
    match result {
        Some(SignInResult::TotpRequired(step)) => step,
        other => panic!("expected a TOTP step, got {:?}", other),
    }
}

fn session_of(result: SignInResult) -> Session {
    match result {
        SignInResult::Authenticated(authenticated) => authenticated.session,
        other => panic!("expected a session, got {:?}", other),
    }
}

#[test]
fn magic_link_with_totp_then_restore_and_invalidate() {
    let environment = environment(true, APP_REDIRECT);
    let email = "rust-flow@example.com";
    let auth = client(&environment);
    auth.send_magic_link(email).wait().unwrap();
    let link = outbox_link(email);

    // Not a redirect of this client: nothing.
    assert!(auth.handle_redirect("otherapp://x?token=t&authMethod=EMAIL_MAGIC_LINK").wait().unwrap().is_none());

    let step = totp_step(auth.handle_redirect(&link).wait().unwrap());
    assert!(step.end_user_id.starts_with("eu_"));
    let secret = step.totp_secret().expect("the enrollment link's secret");
    assert!(secret.len() >= 16 && secret.chars().all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c)));
    assert!(step.qr_code_png(4).unwrap().starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(step.qr_code_terminal(TerminalColors::LightOnDark).unwrap().contains('█'));
    let shown = format!("{:?}", step);
    assert!(!shown.contains(&step.user_jwt) && !shown.contains(&secret) && shown.contains("<redacted>"));

    // A wrong code is a 401, to retype, and leaves the step usable.
    match auth.verify_totp("abcdef", &step.user_jwt).wait() {
        Err(error @ Error::Unauthorized { reason: Some(UnauthorizedReason::TotpCodeRejected), .. }) => {
            assert_eq!(error.code(), 20)
        }
        other => panic!("expected Unauthorized, got {:?}", other),
    }
    let signed_in = auth.verify_totp(&current_code(&environment, email), &step.user_jwt).wait().unwrap();
    assert_eq!(signed_in.is_account_abstracted, Some(false));
    assert!(signed_in.client_id.as_deref().unwrap_or_default().starts_with("cl_"));
    let session = signed_in.session;
    assert_eq!(session.end_user_id(), step.end_user_id);
    assert!(session.token().unwrap().starts_with("cst_"));

    // The redirect again: the same session, the same handle.
    let replayed = session_of(auth.handle_redirect(&link).wait().unwrap().unwrap());
    assert!(replayed.same(&session));

    // Another client (another process, as well) finds it in the keyring.
    let restored = client(&environment).restore_session().wait().unwrap().expect("a stored session");
    assert_eq!(restored.end_user_id(), session.end_user_id());
    assert_eq!(restored.token().unwrap(), session.token().unwrap());

    session.invalidate().wait().unwrap();
    match session.token() {
        Err(Error::SessionInvalidated { message }) => assert!(!message.is_empty()),
        other => panic!("expected SessionInvalidated, got {:?}", other),
    }
    assert!(auth.restore_session().wait().unwrap().is_none());
}

#[test]
fn each_application_keeps_its_own_session_of_an_environment() {
    let environment = environment(false, APP_REDIRECT);
    let named = |id: &str| {
        let mut options = options(&environment, APP_REDIRECT);
        options.application_id = Some(id.to_string());
        PortalAuth::new(&options).unwrap()
    };
    let editor = named("org.example.RustEditor");
    let signed_in = editor.handle_redirect(&grant_redirect(&environment, "rust-editor@example.com")).wait().unwrap();
    let session = session_of(signed_in.expect("a result"));
    assert!(named("org.example.RustTool").restore_session().wait().unwrap().is_none());
    assert!(client(&environment).restore_session().wait().unwrap().is_none(), "a program that names no application");
    let again = named("org.example.RustEditor").restore_session().wait().unwrap().expect("the editor's session");
    assert_eq!(again.token().unwrap(), session.token().unwrap());
    session.invalidate().wait().unwrap();

    let mut bad = options(&environment, APP_REDIRECT);
    bad.application_id = Some("editor".into());
    assert!(matches!(PortalAuth::new(&bad), Err(Error::InvalidArgument { name, .. }) if name == "application_id"));
}

#[test]
fn a_returning_user_has_no_enrollment_link_and_clear_forgets_the_session() {
    let environment = environment(true, APP_REDIRECT);
    let email = "rust-returning@example.com";
    let auth = client(&environment);
    for first in [true, false] {
        let step = totp_step(auth.handle_redirect(&grant_redirect(&environment, email)).wait().unwrap());
        assert_eq!(step.totp_link.is_some(), first);
        if !first {
            assert!(matches!(step.qr_code_png(10), Err(Error::TotpQrUnavailable { .. })));
            assert_eq!(step.totp_secret(), None);
        }
        auth.verify_totp(&current_code(&environment, email), &step.user_jwt).wait().unwrap();
    }
    assert!(auth.restore_session().wait().unwrap().is_some());
    auth.clear_persisted_session().wait().unwrap();
    assert!(auth.restore_session().wait().unwrap().is_none());
}

#[test]
fn futures_complete_on_a_std_only_executor() {
    let environment = environment(false, APP_REDIRECT);
    let email = "rust-future@example.com";
    let auth = client(&environment);
    block_on(auth.send_magic_link(email)).0.unwrap();
    let (result, _) = block_on(auth.handle_redirect(&outbox_link(email)));
    let session = session_of(result.unwrap().unwrap());
    let (restored, _) = block_on(async {
        let restored = auth.restore_session().await?;
        let methods = auth.get_methods().await?;
        Ok::<_, Error>((restored, methods))
    });
    let (restored, methods) = restored.unwrap();
    assert_eq!(restored.unwrap().token().unwrap(), session.token().unwrap());
    assert_eq!(methods.allowed_auth_methods, vec![AuthMethod::EmailMagicLink, AuthMethod::Google, AuthMethod::Apple]);
    assert!(methods.auto_create_wallet);
    let (invalidated, _) = block_on(session.invalidate());
    invalidated.unwrap();
}

#[test]
fn errors_carry_their_fields() {
    // Options the library refuses, by name.
    match PortalAuth::new(&Options::new("", APP_REDIRECT)) {
        Err(Error::InvalidArgument { name, message }) => {
            assert_eq!(name, "auth_environment_id");
            assert_eq!(message, "Invalid argument: auth_environment_id is blank or unusable.");
        }
        other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
    }
    let environment = environment(false, APP_REDIRECT);
    let mut untrusting = options(&environment, APP_REDIRECT);
    untrusting.ca_file = Some("/nonexistent/company-ca.pem".to_string());
    assert!(matches!(PortalAuth::new(&untrusting), Err(Error::InvalidArgument { name, .. }) if name == "ca_file"));
    let auth = client(&environment);
    match auth.send_magic_link("a\0b@example.com").wait() {
        Err(error @ Error::InvalidArgument { .. }) => assert_eq!(error, Error::InvalidArgument {
            name: "email".into(),
            message: "Invalid argument: email contains a NUL byte.".into()
        }),
        other => panic!("expected InvalidArgument, got {:?}", other),
    }
    assert!(matches!(auth.send_magic_link(" ").wait(), Err(Error::InvalidArgument { name, .. }) if name == "email"));

    let mut no_magic_link = options(&environment, APP_REDIRECT);
    no_magic_link.magic_link = None;
    let error = PortalAuth::new(&no_magic_link).unwrap().send_magic_link("x@example.com").wait().unwrap_err();
    assert!(matches!(error, Error::MagicLinkNotConfigured { .. }));
    assert_eq!((error.code(), error.to_string()), (2, error.message().to_string()));

    match auth.handle_redirect("myapp://auth/callback?error=access_denied").wait() {
        Err(Error::AuthenticationFailed { detail, .. }) => assert_eq!(detail, "access_denied"),
        other => panic!("expected AuthenticationFailed, got {:?}", other),
    }
    match auth.verify_totp("123456", "not-a-jwt").wait() {
        Err(Error::InvalidUserJwt { detail, .. }) => assert!(detail.contains("malformed"), "{}", detail),
        other => panic!("expected InvalidUserJwt, got {:?}", other),
    }

    let email_only = format!("{}-email-only", environment);
    control("POST", "environments", Some(&format!(
        "{{\"id\":\"{}\",\"allowedMethods\":[\"EMAIL_MAGIC_LINK\"],\"redirectUrls\":[\"{}\"],\"totpRequired\":false,\
         \"accountAbstraction\":false,\"autoCreateWallet\":false}}", email_only, APP_REDIRECT)));
    match client(&email_only).login_with_google().wait() {
        Err(Error::AuthMethodUnavailable { method, .. }) => assert_eq!(method, "GOOGLE"),
        other => panic!("expected AuthMethodUnavailable, got {:?}", other),
    }
    let url = auth.login_with_apple().wait().unwrap();
    assert!(url.contains("/_emulator/oauth/apple/authorize?state="), "{}", url);

    // Nobody listens: no response at all.
    let mut offline = options(&environment, APP_REDIRECT);
    offline.api_host = Some(loopback_redirect().trim_end_matches("/callback").to_string());
    offline.storage = Storage::Memory;
    assert!(matches!(PortalAuth::new(&offline).unwrap().get_methods().wait(), Err(Error::Network { .. })));
    // Port 1: the connection refused, and said so.
    offline.api_host = Some("http://127.0.0.1:1".to_string());
    match PortalAuth::new(&offline).unwrap().get_methods().wait() {
        Err(Error::Network { reason: NetworkFailureReason::ConnectionRefused, message }) => {
            assert!(message.contains("127.0.0.1:1"), "{}", message)
        }
        other => panic!("expected Network with ConnectionRefused, got {:?}", other),
    }
}

/// A browser: curl loads the authorize URL and follows the fake provider back to the
/// loopback listener. Records what it was asked to open.
fn fetching_opener(seen: Arc<Mutex<Vec<(String, bool)>>>) -> portal_auth::BrowserOpener {
    Box::new(move |url: &str, ephemeral: bool| {
        seen.lock().unwrap().push((url.to_string(), ephemeral));
        let status = Command::new("curl").args(["-sfL", "-o", "/dev/null", url]).status()?;
        if status.success() { Ok(()) } else { Err(io::Error::new(io::ErrorKind::Other, "curl failed")) }
    })
}

#[test]
fn browser_sign_in_with_a_fetching_opener() {
    let redirect = loopback_redirect();
    let environment = environment(true, &redirect);
    let auth = PortalAuth::new(&options(&environment, &redirect)).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    auth.set_browser_opener(Some(fetching_opener(Arc::clone(&seen))));
    assert!(!auth.prefers_ephemeral_web_browser_session());
    auth.set_prefers_ephemeral_web_browser_session(true);

    let step = match auth.sign_in_with_google(None).wait().unwrap() {
        SignInResult::TotpRequired(step) => step,
        other => panic!("expected a TOTP step, got {:?}", other),
    };
    let email = json_string(&control("GET", "control", None), "oauthEmail").unwrap();
    let session = auth.verify_totp(&current_code(&environment, &email), &step.user_jwt).wait().unwrap().session;
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].0.contains("/_emulator/oauth/google/authorize?state=") && seen[0].1);
    }

    // Apple, as a future, with a timeout.
    auth.set_prefers_ephemeral_web_browser_session(false);
    let (result, _) = block_on(auth.sign_in_with_apple(Some(std::time::Duration::from_secs(60))));
    let step = match result.unwrap() {
        SignInResult::TotpRequired(step) => step,
        other => panic!("expected a TOTP step, got {:?}", other),
    };
    assert_eq!(step.end_user_id, session.end_user_id());
    assert!(!seen.lock().unwrap()[1].1);
}

#[test]
fn browser_sign_in_errors() {
    let redirect = loopback_redirect();
    let environment = environment(false, &redirect);
    let auth = PortalAuth::new(&options(&environment, &redirect)).unwrap();

    // An opener that fails (other than NotFound: tests/reasons.rs), or panics: unavailable,
    // for that reason, with the opener's error as the cause (a panic's, the crate's).
    let opener_failed = |error: Error, cause: &str| {
        let message = "Browser sign-in is not possible: the application's browser opener failed (it returned 1).";
        assert_eq!(error.to_string(), message);
        assert_eq!(std::error::Error::source(&error).map(|source| source.to_string()), Some(cause.to_string()));
        match error {
            Error::SignInUnavailable { reason: SignInUnavailableReason::OpenerFailed, url: None, cause: Some(cause), .. } => {
                let kind = cause.error().downcast_ref::<io::Error>().map(io::Error::kind);
                assert!(kind.is_some(), "{:?}", cause);
            }
            other => panic!("expected SignInUnavailable with a cause, got {:?}", other),
        }
    };
    auth.set_browser_opener(Some(Box::new(|_: &str, _: bool| Err(io::Error::new(io::ErrorKind::PermissionDenied, "no display")))));
    opener_failed(auth.sign_in_with_google(None).wait().map(|_| ()).unwrap_err(), "no display");
    auth.set_browser_opener(Some(Box::new(|_: &str, _: bool| panic!("the opener panics"))));
    opener_failed(auth.sign_in_with_google(None).wait().map(|_| ()).unwrap_err(), "the browser opener panicked");

    // The port in use, before any request.
    let port: u16 = redirect.rsplit(':').next().unwrap().trim_end_matches("/callback").parse().unwrap();
    let taken = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    assert!(matches!(auth.sign_in_with_google(None).wait(),
                     Err(Error::SignInUnavailable { reason: SignInUnavailableReason::PortInUse, .. })));
    drop(taken);

    // An opener that opens nothing: a second sign-in is refused meanwhile; cancel ends it closed.
    let (opened_tx, opened_rx) = std::sync::mpsc::channel();
    let opened_tx = Mutex::new(opened_tx);
    auth.set_browser_opener(Some(Box::new(move |_: &str, _: bool| {
        opened_tx.lock().unwrap().send(()).unwrap();
        Ok(())
    })));
    let waiting = auth.sign_in_with_google(None);
    opened_rx.recv().unwrap();
    assert!(matches!(auth.sign_in_with_apple(None).wait(), Err(Error::SignInInProgress { .. })));
    waiting.cancel();
    assert!(matches!(waiting.wait(), Err(Error::SignInClosed { reason: SignInClosedReason::Cancelled, .. })));
    // The timeout also ends it closed.
    let timed_out = auth.sign_in_with_apple(Some(std::time::Duration::from_millis(100))).wait();
    assert!(matches!(timed_out, Err(Error::SignInClosed { reason: SignInClosedReason::TimedOut, .. })), "{:?}", timed_out.map(|_| ()));

    // A redirect URL that is not loopback.
    let app = client(&environment);
    assert!(matches!(app.sign_in_with_google(None).wait(),
                     Err(Error::SignInUnavailable { reason: SignInUnavailableReason::RedirectNotLoopback, .. })));
}

#[test]
// The collects are the point: every thread starts before the first is joined, and every
// session is made before the client is dropped.
#[allow(clippy::needless_collect)]
fn clients_and_sessions_are_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<PortalAuth>();
    send_sync::<Session>();
    send::<Call<SignInResult>>();

    let environment = environment(false, APP_REDIRECT);
    let auth = Arc::new(client(&environment));
    let threads: Vec<_> = (0..4)
        .map(|index| {
            let auth = Arc::clone(&auth);
            let url = grant_redirect(&environment, &format!("rust-thread-{}@example.com", index));
            thread::spawn(move || session_of(auth.handle_redirect(&url).wait().unwrap().unwrap()))
        })
        .collect();
    let sessions: Vec<Session> = threads.into_iter().map(|thread| thread.join().unwrap()).collect();
    // Sessions outlive the client and move between threads.
    drop(auth);
    let ids: Vec<String> =
        sessions.into_iter().map(|session| thread::spawn(move || session.end_user_id()).join().unwrap()).collect();
    assert_eq!(ids.iter().collect::<std::collections::BTreeSet<_>>().len(), 4);
}

#[test]
fn totp_helpers_without_a_sign_in() {
    let link = "otpauth://totp/Portal:someone%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Portal";
    assert_eq!(totp_secret(link).as_deref(), Some("JBSWY3DPEHPK3PXP"));
    assert_eq!(totp_secret("https://example.com/"), None);
    let png = totp_qr_png(link, 2).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    assert_eq!(png, totp_qr_png(link, 2).unwrap());
    assert!(totp_qr_svg(link, 10).unwrap().contains("<svg"));
    // A scale it cannot draw is the seed SDK's totpQrUnavailable, the message giving the range.
    for scale in [0, u32::MAX] {
        match totp_qr_png(link, scale) {
            Err(Error::TotpQrUnavailable { message }) => assert!(message.contains("scale must be a whole number of pixels a module from 1 to "), "{message}"),
            other => panic!("expected TotpQrUnavailable, got {:?}", other.map(|png| png.len())),
        }
    }
    assert!(matches!(totp_qr_svg(link, 0), Err(Error::TotpQrUnavailable { .. })));
    assert!(matches!(totp_qr_png("https://example.com/", 10), Err(Error::TotpQrUnavailable { .. })));
    let modules = totp_qr_matrix(link).unwrap();
    let png_width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]) as usize; // IHDR's width
    assert_eq!(modules.len() * 2, png_width); // the PNG's code at 2 pixels a module
    assert!(modules.iter().all(|row| row.len() == modules.len()) && !modules[0].contains(&true));
    assert!(matches!(totp_qr_matrix("https://example.com/"), Err(Error::TotpQrUnavailable { .. })));
    assert!(matches!(totp_qr_png("otpauth://\0", 10), Err(Error::InvalidArgument { name, .. }) if name == "otpauth_url"));
}
